import logging

# The library reports drops and repairs as warnings; the tests check them through stats().
logging.getLogger("consensus_lens").addHandler(logging.NullHandler())
