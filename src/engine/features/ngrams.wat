;; TF-IDF rows of one all-ASCII group over character 4-grams (SPEC §4.3 step 1, scikit-learn's
;; char analyzer) in one call: normalisation, counting, idf and L2 rows. The twin of
;; `countAsciiJs` + `finish` in tfidf.ts, which document the semantics. Exact: the same rows,
;; term ids, document frequencies and values, bit for bit (ids in order of first sight, each row
;; in order of first occurrence, the same floating-point operations in the same order).
;; Compiled by scripts/build-wasm.mjs (wabt) into ngrams-wasm.ts; do not edit that.
;;
;; Memory (byte addresses chosen by the caller; the texts must be ASCII, bytes 0..127):
;;   0            i32  on return: log2 of the table's final capacity (the next group starts there)
;;   16..143           byte classes (data segment below); the caller's regions start at 256
;;   at[n+1]      i32  address of each text's first byte; at[n] = end of the last text (texts
;;                     back to back, 16 bytes of slack after the last). Each text is normalised
;;                     in place, so it is clobbered.
;;   idfOfDf[n+1] f64  idf = ln((1+n)/(1+df)) + 1 for df = 1..n (the caller's: no log in wasm);
;;                     clobbered (Σ v² of each row, then its 1/√)
;;   start[n+1]   i32  on return: row d is entries start[d]..start[d+1)
;;   terms[]      i32  on return: the term id of each entry (room: one per byte of text)
;;   values[]     f64  on return: each entry's TF-IDF value, rows L2-normalised (same room); the
;;                     gram buffer while a document is counted
;;   df[]         i32  on return: the document frequency of each term id (room: one per byte)
;;   meta[]       (i32 slot, i32 count) per term id: its entry in the current row (room: one per
;;                byte)
;;   table        8-byte entries (key, term id), 8 << maxBits bytes
;;   scratch      4 << maxBits bytes: the old table while it doubles, then the idf of each term
;; The table starts with 2^bits entries and doubles while more than half full; the caller sizes
;; maxBits so that 2^maxBits > 2·(bytes of text), which no vocabulary can outgrow.
;; `count` returns the vocabulary size.
;;
;; Speed (bench/ngrams-bench.ts): a group of 64 × 2 KB has ~131,000 4-grams, ~15,800 terms and
;; ~65,700 (document, term) entries; its 256 KB table lives in L2. Of ~0.9 ms per group, the
;; lookups (step 1) take about half, the rows (steps 2–3) a third, normalisation and the idf/L2
;; passes the rest. Branch-free lookups, a lower load factor, 16-byte entries holding the row
;; state, and loads issued ahead as prefetches were all measured slower or no faster.
(module
  (memory (export "memory") 1)

  ;; Byte classes of ASCII: the lower-cased byte; Python's ASCII whitespace (str.isspace: \t \n
  ;; \v \f \r, \x1c–\x1f, space) is itself with bit 7 set.
  (data (i32.const 16)
    "\00\01\02\03\04\05\06\07\08\89\8a\8b\8c\8d\0e\0f"
    "\10\11\12\13\14\15\16\17\18\19\1a\1b\9c\9d\9e\9f"
    "\a0\21\22\23\24\25\26\27\28\29\2a\2b\2c\2d\2e\2f"
    "\30\31\32\33\34\35\36\37\38\39\3a\3b\3c\3d\3e\3f"
    "\40\61\62\63\64\65\66\67\68\69\6a\6b\6c\6d\6e\6f"
    "\70\71\72\73\74\75\76\77\78\79\7a\5b\5c\5d\5e\5f"
    "\60\61\62\63\64\65\66\67\68\69\6a\6b\6c\6d\6e\6f"
    "\70\71\72\73\74\75\76\77\78\79\7a\7b\7c\7d\7e\7f")

  ;; Python's ASCII whitespace, lane by lane (all ones where whitespace).
  (func $space (param $x v128) (result v128)
    (v128.or
      (i8x16.eq (local.get $x) (i8x16.splat (i32.const 32)))
      (v128.or
        (i8x16.lt_u (i8x16.sub (local.get $x) (i8x16.splat (i32.const 9))) (i8x16.splat (i32.const 5)))
        (i8x16.lt_u (i8x16.sub (local.get $x) (i8x16.splat (i32.const 28))) (i8x16.splat (i32.const 4))))))

  ;; Normalises the text [s, e) in place (lower case; a whitespace byte alone is kept as it is,
  ;; a run of two or more becomes one space); returns its new end. Sixteen bytes at a time while
  ;; no run starts among them (no two whitespace bytes side by side in r..r+16), else byte by
  ;; byte up to the run, which the scalar step collapses. Writing never overtakes reading
  ;; (w ≤ r), and every byte from r on is still the original.
  (func $normalise (param $s i32) (param $e i32) (result i32)
    (local $r i32) (local $w i32) (local $v i32) (local $x v128) (local $pairs i32) (local $stop i32)
    (local.set $r (local.get $s))
    (local.set $w (local.get $s))
    (block $tail
      (loop $chunks
        (br_if $tail (i32.gt_u (i32.add (local.get $r) (i32.const 17)) (local.get $e)))
        (local.set $x (v128.load (local.get $r)))
        (local.set $pairs
          (i8x16.bitmask
            (v128.and (call $space (local.get $x)) (call $space (v128.load offset=1 (local.get $r))))))
        (if (i32.eqz (local.get $pairs))
          (then
            ;; x + 32 where x is in 'A'..'Z'.
            (v128.store (local.get $w)
              (i8x16.add (local.get $x)
                (v128.and
                  (i8x16.lt_u (i8x16.sub (local.get $x) (i8x16.splat (i32.const 65))) (i8x16.splat (i32.const 26)))
                  (i8x16.splat (i32.const 32)))))
            (local.set $r (i32.add (local.get $r) (i32.const 16)))
            (local.set $w (i32.add (local.get $w) (i32.const 16)))
            (br $chunks)))
        ;; A run starts at r + ctz(pairs): the bytes before it one by one, then the run.
        (local.set $stop (i32.add (local.get $r) (i32.ctz (local.get $pairs))))
        (block $copied
          (loop $copy
            (br_if $copied (i32.ge_u (local.get $r) (local.get $stop)))
            (i32.store8 (local.get $w)
              (i32.and (i32.load8_u offset=16 (i32.load8_u (local.get $r))) (i32.const 127)))
            (local.set $r (i32.add (local.get $r) (i32.const 1)))
            (local.set $w (i32.add (local.get $w) (i32.const 1)))
            (br $copy)))
        (i32.store8 (local.get $w) (i32.const 32))
        (local.set $w (i32.add (local.get $w) (i32.const 1)))
        (local.set $r (i32.add (local.get $r) (i32.const 2)))
        (block $skipped
          (loop $skip
            (br_if $skipped (i32.ge_u (local.get $r) (local.get $e)))
            (br_if $skipped (i32.lt_u (i32.load8_u offset=16 (i32.load8_u (local.get $r))) (i32.const 128)))
            (local.set $r (i32.add (local.get $r) (i32.const 1)))
            (br $skip)))
        (br $chunks)))
    ;; The last bytes (fewer than 17 left), one by one.
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $r) (local.get $e)))
        (local.set $v (i32.load8_u offset=16 (i32.load8_u (local.get $r))))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (if (i32.ge_u (local.get $v) (i32.const 128))
          (then
            (local.set $v (i32.and (local.get $v) (i32.const 127)))
            (if (i32.lt_u (local.get $r) (local.get $e))
              (then
                (if (i32.ge_u (i32.load8_u offset=16 (i32.load8_u (local.get $r))) (i32.const 128))
                  (then
                    (local.set $v (i32.const 32))
                    (block $end
                      (loop $rest
                        (local.set $r (i32.add (local.get $r) (i32.const 1)))
                        (br_if $end (i32.ge_u (local.get $r) (local.get $e)))
                        (br_if $rest (i32.ge_u (i32.load8_u offset=16 (i32.load8_u (local.get $r))) (i32.const 128)))))))))))
        (i32.store8 (local.get $w) (local.get $v))
        (local.set $w (i32.add (local.get $w) (i32.const 1)))
        (br $next)))
    (local.get $w))

  ;; Fibonacci hashing: the top `bits` bits of key·2654435761, as a byte offset into the table.
  (func $home (param $key i32) (param $bits i32) (result i32)
    (i32.shl
      (i32.shr_u (i32.mul (local.get $key) (i32.const 0x9e3779b1)) (i32.sub (i32.const 32) (local.get $bits)))
      (i32.const 3)))

  ;; Doubles the table from 2^(bits−1) to 2^bits entries (the old one copied to scratch first).
  (func $rehash (param $table i32) (param $scratch i32) (param $bits i32)
    (local $old i32) (local $q i32) (local $key i32) (local $h i32) (local $mask i32)
    (local.set $old (i32.shl (i32.const 4) (local.get $bits))) ;; bytes of the old table
    (local.set $mask (i32.sub (i32.shl (i32.const 8) (local.get $bits)) (i32.const 1)))
    (memory.copy (local.get $scratch) (local.get $table) (local.get $old))
    (memory.fill (local.get $table) (i32.const 0xff) (i32.shl (i32.const 8) (local.get $bits)))
    (local.set $q (i32.const 0))
    (block $done
      (loop $entries
        (br_if $done (i32.ge_u (local.get $q) (local.get $old)))
        (local.set $key (i32.load (i32.add (local.get $scratch) (local.get $q))))
        (if (i32.ne (local.get $key) (i32.const -1))
          (then
            (local.set $h (call $home (local.get $key) (local.get $bits)))
            (block $free
              (loop $probe
                (br_if $free (i32.eq (i32.load (i32.add (local.get $table) (local.get $h))) (i32.const -1)))
                (local.set $h (i32.and (i32.add (local.get $h) (i32.const 8)) (local.get $mask)))
                (br $probe)))
            (i64.store (i32.add (local.get $table) (local.get $h)) (i64.load (i32.add (local.get $scratch) (local.get $q))))))
        (local.set $q (i32.add (local.get $q) (i32.const 8)))
        (br $entries))))

  (func (export "count")
    (param $n i32) (param $pAt i32) (param $pIdfOfDf i32) (param $pStart i32) (param $pTerms i32)
    (param $pValues i32) (param $pDf i32) (param $pMeta i32) (param $table i32) (param $scratch i32) (param $bits i32)
    (result i32)
    (local $d i32) (local $s i32) (local $p i32) (local $e i32) (local $key i32) (local $h i32)
    (local $ent i32) (local $k i32) (local $slot i32) (local $term i32) (local $vocab i32)
    (local $w i32) (local $row i32) (local $mask i32) (local $shift i32) (local $a i32)
    (local $isNew i32) (local $q i32) (local $gb i32) (local $g i32) (local $gEnd i32) (local $m i32)
    (local $v f64) (local $ss f64)
    (memory.fill (local.get $table) (i32.const 0xff) (i32.shl (i32.const 8) (local.get $bits)))
    (local.set $mask (i32.sub (i32.shl (i32.const 8) (local.get $bits)) (i32.const 1)))
    (local.set $shift (i32.sub (i32.const 32) (local.get $bits)))
    (local.set $d (i32.const 0))
    (block $docsDone
      (loop $docs
        (br_if $docsDone (i32.ge_u (local.get $d) (local.get $n)))
        (local.set $a (i32.add (local.get $pAt) (i32.shl (local.get $d) (i32.const 2))))
        (local.set $s (i32.load (local.get $a)))
        (local.set $p (local.get $s))
        (local.set $e (call $normalise (local.get $s) (i32.load offset=4 (local.get $a))))
        (local.set $row (local.get $w))
        (i32.store (i32.add (local.get $pStart) (i32.shl (local.get $d) (i32.const 2))) (local.get $w))

        ;; 1. The term id of every 4-gram, in order, into the gram buffer: the values still free
        ;; (8 bytes for each byte of this text and the ones after it). A 4-gram's four bytes are
        ;; its key (never −1, the empty key: ASCII). A new term takes the next id.
        (local.set $gb (i32.add (local.get $pValues) (i32.shl (local.get $row) (i32.const 3))))
        (local.set $g (local.get $gb))
        (block $gramsDone
          (loop $grams
            (br_if $gramsDone (i32.gt_u (i32.add (local.get $p) (i32.const 4)) (local.get $e)))
            (local.set $key (i32.load (local.get $p)))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (local.set $h
              (i32.shl (i32.shr_u (i32.mul (local.get $key) (i32.const 0x9e3779b1)) (local.get $shift)) (i32.const 3)))
            (block $found
              (loop $probe
                (local.set $ent (i32.add (local.get $table) (local.get $h)))
                (local.set $k (i32.load (local.get $ent)))
                (br_if $found (i32.eq (local.get $k) (local.get $key)))
                (if (i32.eq (local.get $k) (i32.const -1))
                  (then
                    (i32.store (local.get $ent) (local.get $key))
                    (i32.store offset=4 (local.get $ent) (local.get $vocab))
                    (i32.store (i32.add (local.get $pDf) (i32.shl (local.get $vocab) (i32.const 2))) (i32.const 0))
                    (i64.store (i32.add (local.get $pMeta) (i32.shl (local.get $vocab) (i32.const 3))) (i64.const 0xffffffff))
                    (local.set $vocab (i32.add (local.get $vocab) (i32.const 1)))
                    (br_if $found (i32.le_u (i32.shl (local.get $vocab) (i32.const 1)) (i32.shl (i32.const 1) (local.get $bits))))
                    ;; More than half full: double the table (ids stay; the entry is not needed).
                    (local.set $bits (i32.add (local.get $bits) (i32.const 1)))
                    (call $rehash (local.get $table) (local.get $scratch) (local.get $bits))
                    (local.set $mask (i32.sub (i32.shl (i32.const 8) (local.get $bits)) (i32.const 1)))
                    (local.set $shift (i32.sub (i32.const 32) (local.get $bits)))
                    (i32.store (local.get $g) (i32.sub (local.get $vocab) (i32.const 1)))
                    (local.set $g (i32.add (local.get $g) (i32.const 4)))
                    (br $grams)))
                (local.set $h (i32.and (i32.add (local.get $h) (i32.const 8)) (local.get $mask)))
                (br $probe)))
            (i32.store (local.get $g) (i32.load offset=4 (local.get $ent)))
            (local.set $g (i32.add (local.get $g) (i32.const 4)))
            (br $grams)))

        ;; 2. The row, in order of first occurrence. Slots grow with the documents: a term whose
        ;; slot is before this row's start (or −1) is new here and takes slot w, with count 1.
        ;; Branch-free (new-or-not is a coin flip a branch predictor would keep missing): only
        ;; the stores to a term's own meta wait on each other.
        (local.set $gEnd (local.get $g))
        (local.set $g (local.get $gb))
        (block $rowDone
          (loop $rowNext
            (br_if $rowDone (i32.ge_u (local.get $g) (local.get $gEnd)))
            (local.set $term (i32.load (local.get $g)))
            (local.set $g (i32.add (local.get $g) (i32.const 4)))
            (local.set $m (i32.add (local.get $pMeta) (i32.shl (local.get $term) (i32.const 3))))
            (local.set $slot (i32.load (local.get $m)))
            (local.set $isNew (i32.lt_s (local.get $slot) (local.get $row)))
            (i32.store offset=4 (local.get $m)
              (select (i32.const 1) (i32.add (i32.load offset=4 (local.get $m)) (i32.const 1)) (local.get $isNew)))
            (i32.store (local.get $m) (select (local.get $w) (local.get $slot) (local.get $isNew)))
            (i32.store (i32.add (local.get $pTerms) (i32.shl (local.get $w) (i32.const 2))) (local.get $term))
            (local.set $w (i32.add (local.get $w) (local.get $isNew)))
            (br $rowNext)))

        ;; 3. Raw counts (f64, as the values to be) and df.
        (local.set $q (local.get $row))
        (block $outDone
          (loop $out
            (br_if $outDone (i32.ge_u (local.get $q) (local.get $w)))
            (local.set $term (i32.load (i32.add (local.get $pTerms) (i32.shl (local.get $q) (i32.const 2)))))
            (f64.store (i32.add (local.get $pValues) (i32.shl (local.get $q) (i32.const 3)))
              (f64.convert_i32_u (i32.load offset=4 (i32.add (local.get $pMeta) (i32.shl (local.get $term) (i32.const 3))))))
            (local.set $a (i32.add (local.get $pDf) (i32.shl (local.get $term) (i32.const 2))))
            (i32.store (local.get $a) (i32.add (i32.load (local.get $a)) (i32.const 1)))
            (local.set $q (i32.add (local.get $q) (i32.const 1)))
            (br $out)))
        (local.set $d (i32.add (local.get $d) (i32.const 1)))
        (br $docs)))
    (i32.store (i32.add (local.get $pStart) (i32.shl (local.get $n) (i32.const 2))) (local.get $w))
    (i32.store (i32.const 0) (local.get $bits))

    ;; idf of each term (into scratch), then TF-IDF and L2 rows as `finish` in tfidf.ts does:
    ;; v = count·idf and ss = Σ v² in row order, then v·(1/√ss) when ss > 0.
    (local.set $term (i32.const 0))
    (block $idfDone
      (loop $idf
        (br_if $idfDone (i32.ge_u (local.get $term) (local.get $vocab)))
        (f64.store (i32.add (local.get $scratch) (i32.shl (local.get $term) (i32.const 3)))
          (f64.load (i32.add (local.get $pIdfOfDf)
            (i32.shl (i32.load (i32.add (local.get $pDf) (i32.shl (local.get $term) (i32.const 2)))) (i32.const 3)))))
        (local.set $term (i32.add (local.get $term) (i32.const 1)))
        (br $idf)))
    ;; Σ v² of each row into idfOfDf (no longer needed), then 1/√ss, then the scaling: three
    ;; passes (measured on this machine: a scaling loop fed straight by √ and ÷, as in `finish`,
    ;; ran several times slower than one reading 1/√ss from memory).
    (local.set $d (i32.const 0))
    (block $weighed
      (loop $weigh
        (br_if $weighed (i32.ge_u (local.get $d) (local.get $n)))
        (local.set $a (i32.add (local.get $pStart) (i32.shl (local.get $d) (i32.const 2))))
        (local.set $q (i32.load (local.get $a)))
        (local.set $w (i32.load offset=4 (local.get $a)))
        (local.set $ss (f64.const 0))
        (block $rowWeighed
          (loop $entry
            (br_if $rowWeighed (i32.ge_u (local.get $q) (local.get $w)))
            (local.set $a (i32.add (local.get $pValues) (i32.shl (local.get $q) (i32.const 3))))
            (local.set $v
              (f64.mul (f64.load (local.get $a))
                (f64.load (i32.add (local.get $scratch)
                  (i32.shl (i32.load (i32.add (local.get $pTerms) (i32.shl (local.get $q) (i32.const 2)))) (i32.const 3))))))
            (f64.store (local.get $a) (local.get $v))
            (local.set $ss (f64.add (local.get $ss) (f64.mul (local.get $v) (local.get $v))))
            (local.set $q (i32.add (local.get $q) (i32.const 1)))
            (br $entry)))
        (f64.store (i32.add (local.get $pIdfOfDf) (i32.shl (local.get $d) (i32.const 3))) (local.get $ss))
        (local.set $d (i32.add (local.get $d) (i32.const 1)))
        (br $weigh)))
    (local.set $d (i32.const 0))
    (block $inverted
      (loop $invert
        (br_if $inverted (i32.ge_u (local.get $d) (local.get $n)))
        (local.set $a (i32.add (local.get $pIdfOfDf) (i32.shl (local.get $d) (i32.const 3))))
        (local.set $ss (f64.load (local.get $a)))
        (f64.store (local.get $a)
          (select (f64.div (f64.const 1) (f64.sqrt (local.get $ss))) (f64.const 0) (f64.gt (local.get $ss) (f64.const 0))))
        (local.set $d (i32.add (local.get $d) (i32.const 1)))
        (br $invert)))
    (local.set $d (i32.const 0))
    (block $scaled
      (loop $scale
        (br_if $scaled (i32.ge_u (local.get $d) (local.get $n)))
        (local.set $v (f64.load (i32.add (local.get $pIdfOfDf) (i32.shl (local.get $d) (i32.const 3)))))
        (local.set $a (i32.add (local.get $pStart) (i32.shl (local.get $d) (i32.const 2))))
        (local.set $q (i32.load (local.get $a)))
        (local.set $w (i32.load offset=4 (local.get $a)))
        (if (f64.gt (local.get $v) (f64.const 0))
          (then
            (block $rowScaled
              (loop $entry
                (br_if $rowScaled (i32.ge_u (local.get $q) (local.get $w)))
                (local.set $a (i32.add (local.get $pValues) (i32.shl (local.get $q) (i32.const 3))))
                (f64.store (local.get $a) (f64.mul (f64.load (local.get $a)) (local.get $v)))
                (local.set $q (i32.add (local.get $q) (i32.const 1)))
                (br $entry)))))
        (local.set $d (i32.add (local.get $d) (i32.const 1)))
        (br $scale)))
    (local.get $vocab))
)
