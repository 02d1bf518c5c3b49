;; TF-IDF rows of one all-ASCII group over character 4-grams (docs/contract.md#ec-and-core, step 1, scikit-learn's
;; char analyzer) in one call: normalisation, counting, idf and L2 rows. The twin of
;; `countSmallAlphabet` + `finish` in tfidf.ts, which document the semantics. Exact: the same rows,
;; term ids, document frequencies and values, bit for bit (ids in order of first sight, each row
;; in order of first occurrence, the same floating-point operations in the same order).
;; The same module (one memory, so those rows need no copy) computes the within-class cosines of
;; any group's rows: `classify` and `cosines`, after `count` below.
;; Compiled by scripts/build-wasm.mjs (wabt) into ngrams-wasm.ts; do not edit that.
;;
;; Memory of `count` (byte addresses chosen by the caller; the texts must be ASCII, bytes 0..127):
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
  ;; ---- Within-class cosines (docs/contract.md#ec-and-core, step 1): `cosinesByClassJs` in tfidf.ts, in wasm ----
  ;; The same split of terms by document frequency as the JS path (df < 2: no pair; df above
  ;; maxSparse: a dense column; the rest: pairs one by one; the caller picks maxSparse) and the
  ;; same products; only the order of the sums differs, so results agree with it to rounding.
  ;; `classify` codes the vocabulary, then `cosines` does every class in turn:
  ;;   1. one branch-free pass over its members' rows: a dense value goes into F; a sparse one
  ;;      becomes an entry chained to the term's latest entry in the class (if any, the entry
  ;;      is listed);
  ;;   2. each listed entry adds its products with the earlier entries of its chain;
  ;;   3. the Gram product of F (f64x2) adds the dense columns' share.
  ;;
  ;; Memory (byte addresses chosen by the caller; the rows may be those `count` left, in place):
  ;;   8..15        f64  scratch: the target of the stores of values that are not dense
  ;;   start[n+1], terms[], values[], df[]   the rows (as TfidfRows)
  ;;   code[vocab]  i32  set by `classify`: −1 no pair (df < 2); −2 − column for a dense term;
  ;;                     ≥ 0 for a sparse term: 0, then the address of its latest entry (stale
  ;;                     when below the current class's first entry)
  ;;   sizes[k]     i32  members of each class (every class has at least two)
  ;;   members[]    i32  the classes' members (row indices), class after class
  ;;   out[]        f64  on return: each class's packed upper triangle, back to back
  ;;   entries      16 bytes per sparse (member, term) of every class, from the second on (room:
  ;;                one per entry of the rows, and two more): the value (f64), the address of
  ;;                the member's pair row in out (i32: out + 8·base(a), base(a) = a·m − a(a+1)/2
  ;;                − a − 1, so pair (a, b) is at it + 8b) and the term's previous code (i32)
  ;;   list         8 bytes per chained entry of one class (room: one per entry, and one more):
  ;;                the entry's address and 8·a (i32 each)
  ;;   F            m × D' f64 (D' = D rounded up to even; rows zeroed here), 16-byte aligned:
  ;;                the dense columns of one class, row-major
  ;;
  ;; Speed (bench/cosines-bench.ts, a group of 64 × 2 KB, ~59,000 row entries of class members,
  ;; ~900 within-class pairs): ~0.5 ms against ~1.7 ms for the JS path; the pass (1) ~0.2 ms
  ;; (a branchy pass, on the kind of each term, was ~0.1 ms slower), the chains ~6 ns per pair,
  ;; the Gram ~0.15 ns per (pair, column).

  ;; Codes of the vocabulary from df; returns D, the number of dense columns.
  (func (export "classify") (param $pDf i32) (param $vocab i32) (param $maxSparse i32) (param $pCode i32) (result i32)
    (local $t i32) (local $df i32) (local $D i32) (local $code i32)
    (block $done
      (loop $terms
        (br_if $done (i32.ge_u (local.get $t) (local.get $vocab)))
        (local.set $df (i32.load (i32.add (local.get $pDf) (i32.shl (local.get $t) (i32.const 2)))))
        (local.set $code (i32.const 0))
        (if (i32.lt_u (local.get $df) (i32.const 2))
          (then (local.set $code (i32.const -1)))
          (else
            (if (i32.gt_u (local.get $df) (local.get $maxSparse))
              (then
                (local.set $code (i32.sub (i32.const -2) (local.get $D)))
                (local.set $D (i32.add (local.get $D) (i32.const 1)))))))
        (i32.store (i32.add (local.get $pCode) (i32.shl (local.get $t) (i32.const 2))) (local.get $code))
        (local.set $t (i32.add (local.get $t) (i32.const 1)))
        (br $terms)))
    (local.get $D))

  ;; Adds v128 lanes.
  (func $hsum (param $x v128) (result f64)
    (f64.add (f64x2.extract_lane 0 (local.get $x)) (f64x2.extract_lane 1 (local.get $x))))

  ;; out[pair(a, b)] += F_a · F_b for a < b, F row-major m × (row / 8) (row a multiple of 16,
  ;; zero-padded). Two rows a, a+1 against four rows b..b+3 per pass: eight f64x2 accumulators,
  ;; each pair of F_a values loaded once for four products. (a+1, a+1) is computed, not stored.
  (func $gram (param $F i32) (param $m i32) (param $row i32) (param $out i32)
    (local $a i32) (local $b i32) (local $k i32)
    (local $ra0 i32) (local $ra1 i32) (local $rb0 i32) (local $rb1 i32) (local $rb2 i32) (local $rb3 i32)
    (local $o0 i32) (local $o1 i32) (local $p i32)
    (local $x0 v128) (local $x1 v128) (local $y v128)
    (local $c00 v128) (local $c01 v128) (local $c02 v128) (local $c03 v128)
    (local $c10 v128) (local $c11 v128) (local $c12 v128) (local $c13 v128)
    ;; o0, o1: pair rows of a and a+1 (out + 8·base).
    (local.set $o0 (i32.sub (local.get $out) (i32.const 8)))
    (block $aDone
      (loop $aNext
        (br_if $aDone (i32.ge_u (i32.add (local.get $a) (i32.const 1)) (local.get $m)))
        (local.set $ra0 (i32.add (local.get $F) (i32.mul (local.get $a) (local.get $row))))
        (local.set $ra1 (i32.add (local.get $ra0) (local.get $row)))
        ;; base(a+1) = base(a) + m − a − 2
        (local.set $o1 (i32.add (local.get $o0) (i32.shl (i32.sub (i32.sub (local.get $m) (local.get $a)) (i32.const 2)) (i32.const 3))))
        (local.set $b (i32.add (local.get $a) (i32.const 1)))
        (block $b4Done
          (loop $b4
            (br_if $b4Done (i32.gt_u (i32.add (local.get $b) (i32.const 4)) (local.get $m)))
            (local.set $rb0 (i32.add (local.get $F) (i32.mul (local.get $b) (local.get $row))))
            (local.set $rb1 (i32.add (local.get $rb0) (local.get $row)))
            (local.set $rb2 (i32.add (local.get $rb1) (local.get $row)))
            (local.set $rb3 (i32.add (local.get $rb2) (local.get $row)))
            (local.set $c00 (v128.const f64x2 0 0))
            (local.set $c01 (v128.const f64x2 0 0))
            (local.set $c02 (v128.const f64x2 0 0))
            (local.set $c03 (v128.const f64x2 0 0))
            (local.set $c10 (v128.const f64x2 0 0))
            (local.set $c11 (v128.const f64x2 0 0))
            (local.set $c12 (v128.const f64x2 0 0))
            (local.set $c13 (v128.const f64x2 0 0))
            (local.set $k (i32.const 0))
            (block $kDone
              (loop $kNext
                (br_if $kDone (i32.ge_u (local.get $k) (local.get $row)))
                (local.set $x0 (v128.load (i32.add (local.get $ra0) (local.get $k))))
                (local.set $x1 (v128.load (i32.add (local.get $ra1) (local.get $k))))
                (local.set $y (v128.load (i32.add (local.get $rb0) (local.get $k))))
                (local.set $c00 (f64x2.add (local.get $c00) (f64x2.mul (local.get $x0) (local.get $y))))
                (local.set $c10 (f64x2.add (local.get $c10) (f64x2.mul (local.get $x1) (local.get $y))))
                (local.set $y (v128.load (i32.add (local.get $rb1) (local.get $k))))
                (local.set $c01 (f64x2.add (local.get $c01) (f64x2.mul (local.get $x0) (local.get $y))))
                (local.set $c11 (f64x2.add (local.get $c11) (f64x2.mul (local.get $x1) (local.get $y))))
                (local.set $y (v128.load (i32.add (local.get $rb2) (local.get $k))))
                (local.set $c02 (f64x2.add (local.get $c02) (f64x2.mul (local.get $x0) (local.get $y))))
                (local.set $c12 (f64x2.add (local.get $c12) (f64x2.mul (local.get $x1) (local.get $y))))
                (local.set $y (v128.load (i32.add (local.get $rb3) (local.get $k))))
                (local.set $c03 (f64x2.add (local.get $c03) (f64x2.mul (local.get $x0) (local.get $y))))
                (local.set $c13 (f64x2.add (local.get $c13) (f64x2.mul (local.get $x1) (local.get $y))))
                (local.set $k (i32.add (local.get $k) (i32.const 16)))
                (br $kNext)))
            (local.set $p (i32.add (local.get $o0) (i32.shl (local.get $b) (i32.const 3))))
            (f64.store (local.get $p) (f64.add (f64.load (local.get $p)) (call $hsum (local.get $c00))))
            (f64.store offset=8 (local.get $p) (f64.add (f64.load offset=8 (local.get $p)) (call $hsum (local.get $c01))))
            (f64.store offset=16 (local.get $p) (f64.add (f64.load offset=16 (local.get $p)) (call $hsum (local.get $c02))))
            (f64.store offset=24 (local.get $p) (f64.add (f64.load offset=24 (local.get $p)) (call $hsum (local.get $c03))))
            (local.set $p (i32.add (local.get $o1) (i32.shl (local.get $b) (i32.const 3))))
            ;; (a+1, b) only for b > a+1: the first block of a pass starts at b = a+1.
            (if (i32.gt_u (local.get $b) (i32.add (local.get $a) (i32.const 1)))
              (then (f64.store (local.get $p) (f64.add (f64.load (local.get $p)) (call $hsum (local.get $c10))))))
            (f64.store offset=8 (local.get $p) (f64.add (f64.load offset=8 (local.get $p)) (call $hsum (local.get $c11))))
            (f64.store offset=16 (local.get $p) (f64.add (f64.load offset=16 (local.get $p)) (call $hsum (local.get $c12))))
            (f64.store offset=24 (local.get $p) (f64.add (f64.load offset=24 (local.get $p)) (call $hsum (local.get $c13))))
            (local.set $b (i32.add (local.get $b) (i32.const 4)))
            (br $b4)))
        ;; The last 0–3 rows b, one at a time (two accumulators per row of a, even and odd pairs
        ;; of columns, for independent adds).
        (block $b1Done
          (loop $b1
            (br_if $b1Done (i32.ge_u (local.get $b) (local.get $m)))
            (local.set $rb0 (i32.add (local.get $F) (i32.mul (local.get $b) (local.get $row))))
            (local.set $c00 (v128.const f64x2 0 0))
            (local.set $c10 (v128.const f64x2 0 0))
            (local.set $k (i32.const 0))
            (block $kDone
              (loop $kNext
                (br_if $kDone (i32.ge_u (local.get $k) (local.get $row)))
                (local.set $y (v128.load (i32.add (local.get $rb0) (local.get $k))))
                (local.set $c00 (f64x2.add (local.get $c00) (f64x2.mul (v128.load (i32.add (local.get $ra0) (local.get $k))) (local.get $y))))
                (local.set $c10 (f64x2.add (local.get $c10) (f64x2.mul (v128.load (i32.add (local.get $ra1) (local.get $k))) (local.get $y))))
                (local.set $k (i32.add (local.get $k) (i32.const 16)))
                (br $kNext)))
            (local.set $p (i32.add (local.get $o0) (i32.shl (local.get $b) (i32.const 3))))
            (f64.store (local.get $p) (f64.add (f64.load (local.get $p)) (call $hsum (local.get $c00))))
            (if (i32.gt_u (local.get $b) (i32.add (local.get $a) (i32.const 1)))
              (then
                (local.set $p (i32.add (local.get $o1) (i32.shl (local.get $b) (i32.const 3))))
                (f64.store (local.get $p) (f64.add (f64.load (local.get $p)) (call $hsum (local.get $c10))))))
            (local.set $b (i32.add (local.get $b) (i32.const 1)))
            (br $b1)))
        ;; base(a+2) = base(a+1) + m − a − 3
        (local.set $o0 (i32.add (local.get $o1) (i32.shl (i32.sub (i32.sub (local.get $m) (local.get $a)) (i32.const 3)) (i32.const 3))))
        (local.set $a (i32.add (local.get $a) (i32.const 2)))
        (br $aNext))))

  ;; The cosines of k classes (see the memory layout above); `classify` ran first.
  (func (export "cosines")
    (param $pStart i32) (param $pTerms i32) (param $pValues i32) (param $pCode i32) (param $D i32)
    (param $k i32) (param $pSizes i32) (param $pMembers i32) (param $pOut i32) (param $pEntries i32) (param $pList i32) (param $pF i32)
    (local $c i32) (local $m i32) (local $a i32) (local $q i32) (local $tq i32) (local $vq i32) (local $tEnd i32)
    (local $pc i32) (local $code i32) (local $e i32) (local $first i32) (local $row i32) (local $rowF i32)
    (local $outRow i32) (local $a8 i32) (local $p i32) (local $at i32) (local $v f64)
    (local $l i32) (local $lEnd i32) (local $a864 i64) (local $outRow64 i64) (local $kept i32)
    (local.set $row (i32.shl (i32.and (i32.add (local.get $D) (i32.const 1)) (i32.const -2)) (i32.const 3)))
    ;; Entries are named by their byte address (so a code below the class's first is stale).
    (local.set $e (i32.add (local.get $pEntries) (i32.const 16)))
    (block $classesDone
      (loop $classes
        (br_if $classesDone (i32.ge_u (local.get $c) (local.get $k)))
        (local.set $m (i32.load (i32.add (local.get $pSizes) (i32.shl (local.get $c) (i32.const 2)))))
        (local.set $first (local.get $e))
        (memory.fill (local.get $pOut) (i32.const 0)
          (i32.shl (i32.shr_u (i32.mul (local.get $m) (i32.sub (local.get $m) (i32.const 1))) (i32.const 1)) (i32.const 3)))
        (memory.fill (local.get $pF) (i32.const 0) (i32.mul (local.get $m) (local.get $row)))
        (local.set $outRow (i32.sub (local.get $pOut) (i32.const 8)))
        (local.set $rowF (local.get $pF))
        (local.set $lEnd (local.get $pList))
        (local.set $a (i32.const 0))
        (block $membersDone
          (loop $members
            (br_if $membersDone (i32.ge_u (local.get $a) (local.get $m)))
            (local.set $at (i32.add (local.get $pStart) (i32.shl (i32.load (local.get $pMembers)) (i32.const 2))))
            (local.set $pMembers (i32.add (local.get $pMembers) (i32.const 4)))
            (local.set $q (i32.load (local.get $at)))
            (local.set $tq (i32.add (local.get $pTerms) (i32.shl (local.get $q) (i32.const 2))))
            (local.set $vq (i32.add (local.get $pValues) (i32.shl (local.get $q) (i32.const 3))))
            (local.set $tEnd (i32.add (local.get $pTerms) (i32.shl (i32.load offset=4 (local.get $at)) (i32.const 2))))
            (local.set $a864 (i64.shl (i64.extend_i32_u (i32.shl (local.get $a) (i32.const 3))) (i64.const 32)))
            (local.set $outRow64 (i64.extend_i32_u (local.get $outRow)))
            ;; Branch-free (the kind of a term is a coin flip to a branch predictor): every value
            ;; is stored into F (at the dummy address 8 unless dense) and written as an entry
            ;; (kept, e + 16, only if sparse); an entry whose term has an earlier one in the class
            ;; is listed (with a·8).
            (block $entriesDone
              (loop $entries
                (br_if $entriesDone (i32.ge_u (local.get $tq) (local.get $tEnd)))
                (local.set $pc (i32.add (local.get $pCode) (i32.shl (i32.load (local.get $tq)) (i32.const 2))))
                (local.set $code (i32.load (local.get $pc)))
                (local.set $v (f64.load (local.get $vq)))
                (f64.store
                  (select
                    (i32.sub (local.get $rowF) (i32.shl (i32.add (local.get $code) (i32.const 2)) (i32.const 3)))
                    (i32.const 8)
                    (i32.lt_s (local.get $code) (i32.const -1)))
                  (local.get $v))
                (f64.store (local.get $e) (local.get $v))
                (i64.store offset=8 (local.get $e)
                  (i64.or (local.get $outRow64) (i64.shl (i64.extend_i32_u (local.get $code)) (i64.const 32))))
                (i64.store (local.get $lEnd) (i64.or (local.get $a864) (i64.extend_i32_u (local.get $e))))
                (local.set $lEnd (i32.add (local.get $lEnd)
                  (i32.shl (i32.ge_s (local.get $code) (local.get $first)) (i32.const 3))))
                (local.set $kept (i32.ge_s (local.get $code) (i32.const 0)))
                (i32.store (local.get $pc) (select (local.get $e) (local.get $code) (local.get $kept)))
                (local.set $e (i32.add (local.get $e) (i32.shl (local.get $kept) (i32.const 4))))
                (local.set $tq (i32.add (local.get $tq) (i32.const 4)))
                (local.set $vq (i32.add (local.get $vq) (i32.const 8)))
                (br $entries)))
            ;; base(a+1) = base(a) + m − a − 2
            (local.set $outRow (i32.add (local.get $outRow)
              (i32.shl (i32.sub (i32.sub (local.get $m) (local.get $a)) (i32.const 2)) (i32.const 3))))
            (local.set $rowF (i32.add (local.get $rowF) (local.get $row)))
            (local.set $a (i32.add (local.get $a) (i32.const 1)))
            (br $members)))
        ;; The sparse pairs: each listed entry (of member a) with every earlier entry of its term
        ;; in the class (member a' < a), at out + 8·(base(a') + a).
        (local.set $l (local.get $pList))
        (block $listDone
          (loop $list
            (br_if $listDone (i32.ge_u (local.get $l) (local.get $lEnd)))
            (local.set $p (i32.load (local.get $l)))
            (local.set $a8 (i32.load offset=4 (local.get $l)))
            (local.set $v (f64.load (local.get $p)))
            (local.set $p (i32.load offset=12 (local.get $p)))
            (loop $chain
              (local.set $at (i32.add (i32.load offset=8 (local.get $p)) (local.get $a8)))
              (f64.store (local.get $at)
                (f64.add (f64.load (local.get $at)) (f64.mul (f64.load (local.get $p)) (local.get $v))))
              (local.set $p (i32.load offset=12 (local.get $p)))
              (br_if $chain (i32.ge_s (local.get $p) (local.get $first))))
            (local.set $l (i32.add (local.get $l) (i32.const 8)))
            (br $list)))
        (if (local.get $D) (then (call $gram (local.get $pF) (local.get $m) (local.get $row) (local.get $pOut))))
        (local.set $pOut (i32.add (local.get $pOut)
          (i32.shl (i32.shr_u (i32.mul (local.get $m) (i32.sub (local.get $m) (i32.const 1))) (i32.const 1)) (i32.const 3))))
        (local.set $c (i32.add (local.get $c) (i32.const 1)))
        (br $classes))))
)
