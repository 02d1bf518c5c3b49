;; Replicator dynamics on the CoRE payoff W' = A' − αI + C·eeᵀ (docs/contract.md#ec-and-core steps 4–5, CoRE paper
;; eq. 3), the whole iteration loop in one call, with 128-bit SIMD (two f64 lanes).
;;
;; The twin of `replicatorJs` in replicator.ts, which documents the semantics; this file only
;; changes the order of floating-point sums (lanes and partial sums), so results agree with it to
;; rounding. Compiled by scripts/build-wasm.mjs (wabt) into replicator-wasm.ts; do not edit that.
;;
;; Memory (byte addresses chosen by the caller, 16-byte aligned; roll-outs in block order: block
;; 0's members, block 1's, …, then the roll-outs in no block):
;;   size[nb]    i32  members m of each block
;;   active[nb]  i32  1 while the class is in play (the LOST rule); set here
;;   x[n]        f64  on return: x(T), in block order
;;   next[n]     f64  scratch: x(t+1)
;;   wx[n]       f64  scratch: W'x(t)
;;   A           f64  the blocks of A', each m×m row-major, back to back
;; `run` returns the iteration count T.
(module
  (memory (export "memory") 1)

  ;; wx[0..m) += A·x[0..m) for one m×m block A (row-major at byte address $a).
  ;; Four rows per pass, each row's sum split over two f64x2 accumulators (columns q ≡ 0,1 and
  ;; q ≡ 2,3 mod 4): eight independent add chains keep the adders busy, and each pair of x values
  ;; is loaded once for the four rows. Odd m leaves one last column, done in scalar.
  (func $block (param $a i32) (param $x i32) (param $wx i32) (param $m i32)
    (local $row i32) (local $p i32) (local $q i32)
    (local $a0 i32) (local $a1 i32) (local $a2 i32) (local $a3 i32)
    (local $xv v128) (local $xw v128)
    (local $c0 v128) (local $c1 v128) (local $c2 v128) (local $c3 v128)
    (local $c4 v128) (local $c5 v128) (local $c6 v128) (local $c7 v128)
    (local $s0 f64) (local $s1 f64) (local $s2 f64) (local $s3 f64) (local $xs f64)
    (local $w i32)
    (local.set $row (i32.shl (local.get $m) (i32.const 3))) ;; bytes per row
    (local.set $p (i32.const 0))

    ;; Rows p..p+3.
    (block $done4
      (loop $rows4
        (br_if $done4 (i32.gt_u (i32.add (local.get $p) (i32.const 4)) (local.get $m)))
        (local.set $a0 (i32.add (local.get $a) (i32.mul (local.get $p) (local.get $row))))
        (local.set $a1 (i32.add (local.get $a0) (local.get $row)))
        (local.set $a2 (i32.add (local.get $a1) (local.get $row)))
        (local.set $a3 (i32.add (local.get $a2) (local.get $row)))
        (local.set $c0 (v128.const f64x2 0 0))
        (local.set $c1 (v128.const f64x2 0 0))
        (local.set $c2 (v128.const f64x2 0 0))
        (local.set $c3 (v128.const f64x2 0 0))
        (local.set $c4 (v128.const f64x2 0 0))
        (local.set $c5 (v128.const f64x2 0 0))
        (local.set $c6 (v128.const f64x2 0 0))
        (local.set $c7 (v128.const f64x2 0 0))
        (local.set $q (i32.const 0))
        ;; Columns q..q+3 (byte offset $q).
        (block $done
          (loop $cols
            (br_if $done (i32.gt_u (i32.add (local.get $q) (i32.const 32)) (local.get $row)))
            (local.set $xv (v128.load (i32.add (local.get $x) (local.get $q))))
            (local.set $xw (v128.load offset=16 (i32.add (local.get $x) (local.get $q))))
            (local.set $c0 (f64x2.add (local.get $c0) (f64x2.mul (v128.load (i32.add (local.get $a0) (local.get $q))) (local.get $xv))))
            (local.set $c1 (f64x2.add (local.get $c1) (f64x2.mul (v128.load offset=16 (i32.add (local.get $a0) (local.get $q))) (local.get $xw))))
            (local.set $c2 (f64x2.add (local.get $c2) (f64x2.mul (v128.load (i32.add (local.get $a1) (local.get $q))) (local.get $xv))))
            (local.set $c3 (f64x2.add (local.get $c3) (f64x2.mul (v128.load offset=16 (i32.add (local.get $a1) (local.get $q))) (local.get $xw))))
            (local.set $c4 (f64x2.add (local.get $c4) (f64x2.mul (v128.load (i32.add (local.get $a2) (local.get $q))) (local.get $xv))))
            (local.set $c5 (f64x2.add (local.get $c5) (f64x2.mul (v128.load offset=16 (i32.add (local.get $a2) (local.get $q))) (local.get $xw))))
            (local.set $c6 (f64x2.add (local.get $c6) (f64x2.mul (v128.load (i32.add (local.get $a3) (local.get $q))) (local.get $xv))))
            (local.set $c7 (f64x2.add (local.get $c7) (f64x2.mul (v128.load offset=16 (i32.add (local.get $a3) (local.get $q))) (local.get $xw))))
            (local.set $q (i32.add (local.get $q) (i32.const 32)))
            (br $cols)))
        ;; Two more columns (m mod 4 ≥ 2).
        (if (i32.le_u (i32.add (local.get $q) (i32.const 16)) (local.get $row))
          (then
            (local.set $xv (v128.load (i32.add (local.get $x) (local.get $q))))
            (local.set $c0 (f64x2.add (local.get $c0) (f64x2.mul (v128.load (i32.add (local.get $a0) (local.get $q))) (local.get $xv))))
            (local.set $c2 (f64x2.add (local.get $c2) (f64x2.mul (v128.load (i32.add (local.get $a1) (local.get $q))) (local.get $xv))))
            (local.set $c4 (f64x2.add (local.get $c4) (f64x2.mul (v128.load (i32.add (local.get $a2) (local.get $q))) (local.get $xv))))
            (local.set $c6 (f64x2.add (local.get $c6) (f64x2.mul (v128.load (i32.add (local.get $a3) (local.get $q))) (local.get $xv))))
            (local.set $q (i32.add (local.get $q) (i32.const 16)))))
        ;; Each row's four partial sums into one.
        (local.set $c0 (f64x2.add (local.get $c0) (local.get $c1)))
        (local.set $c2 (f64x2.add (local.get $c2) (local.get $c3)))
        (local.set $c4 (f64x2.add (local.get $c4) (local.get $c5)))
        (local.set $c6 (f64x2.add (local.get $c6) (local.get $c7)))
        (local.set $s0 (f64.add (f64x2.extract_lane 0 (local.get $c0)) (f64x2.extract_lane 1 (local.get $c0))))
        (local.set $s1 (f64.add (f64x2.extract_lane 0 (local.get $c2)) (f64x2.extract_lane 1 (local.get $c2))))
        (local.set $s2 (f64.add (f64x2.extract_lane 0 (local.get $c4)) (f64x2.extract_lane 1 (local.get $c4))))
        (local.set $s3 (f64.add (f64x2.extract_lane 0 (local.get $c6)) (f64x2.extract_lane 1 (local.get $c6))))
        ;; The last column of an odd m.
        (if (i32.lt_u (local.get $q) (local.get $row))
          (then
            (local.set $xs (f64.load (i32.add (local.get $x) (local.get $q))))
            (local.set $s0 (f64.add (local.get $s0) (f64.mul (f64.load (i32.add (local.get $a0) (local.get $q))) (local.get $xs))))
            (local.set $s1 (f64.add (local.get $s1) (f64.mul (f64.load (i32.add (local.get $a1) (local.get $q))) (local.get $xs))))
            (local.set $s2 (f64.add (local.get $s2) (f64.mul (f64.load (i32.add (local.get $a2) (local.get $q))) (local.get $xs))))
            (local.set $s3 (f64.add (local.get $s3) (f64.mul (f64.load (i32.add (local.get $a3) (local.get $q))) (local.get $xs))))))
        (local.set $w (i32.add (local.get $wx) (i32.shl (local.get $p) (i32.const 3))))
        (f64.store (local.get $w) (f64.add (f64.load (local.get $w)) (local.get $s0)))
        (f64.store offset=8 (local.get $w) (f64.add (f64.load offset=8 (local.get $w)) (local.get $s1)))
        (f64.store offset=16 (local.get $w) (f64.add (f64.load offset=16 (local.get $w)) (local.get $s2)))
        (f64.store offset=24 (local.get $w) (f64.add (f64.load offset=24 (local.get $w)) (local.get $s3)))
        (local.set $p (i32.add (local.get $p) (i32.const 4)))
        (br $rows4)))

    ;; The m mod 4 rows left, one at a time (same column scheme, two accumulators).
    (block $done1
      (loop $rows1
        (br_if $done1 (i32.ge_u (local.get $p) (local.get $m)))
        (local.set $a0 (i32.add (local.get $a) (i32.mul (local.get $p) (local.get $row))))
        (local.set $c0 (v128.const f64x2 0 0))
        (local.set $c1 (v128.const f64x2 0 0))
        (local.set $q (i32.const 0))
        (block $done
          (loop $cols
            (br_if $done (i32.gt_u (i32.add (local.get $q) (i32.const 32)) (local.get $row)))
            (local.set $c0 (f64x2.add (local.get $c0) (f64x2.mul (v128.load (i32.add (local.get $a0) (local.get $q))) (v128.load (i32.add (local.get $x) (local.get $q))))))
            (local.set $c1 (f64x2.add (local.get $c1) (f64x2.mul (v128.load offset=16 (i32.add (local.get $a0) (local.get $q))) (v128.load offset=16 (i32.add (local.get $x) (local.get $q))))))
            (local.set $q (i32.add (local.get $q) (i32.const 32)))
            (br $cols)))
        (if (i32.le_u (i32.add (local.get $q) (i32.const 16)) (local.get $row))
          (then
            (local.set $c0 (f64x2.add (local.get $c0) (f64x2.mul (v128.load (i32.add (local.get $a0) (local.get $q))) (v128.load (i32.add (local.get $x) (local.get $q))))))
            (local.set $q (i32.add (local.get $q) (i32.const 16)))))
        (local.set $c0 (f64x2.add (local.get $c0) (local.get $c1)))
        (local.set $s0 (f64.add (f64x2.extract_lane 0 (local.get $c0)) (f64x2.extract_lane 1 (local.get $c0))))
        (if (i32.lt_u (local.get $q) (local.get $row))
          (then
            (local.set $s0 (f64.add (local.get $s0) (f64.mul (f64.load (i32.add (local.get $a0) (local.get $q))) (f64.load (i32.add (local.get $x) (local.get $q))))))))
        (local.set $w (i32.add (local.get $wx) (i32.shl (local.get $p) (i32.const 3))))
        (f64.store (local.get $w) (f64.add (f64.load (local.get $w)) (local.get $s0)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $rows1))))

  ;; wx += A'x for the block-diagonal A': block by block, skipping the classes that have lost.
  (func $product (param $nb i32) (param $pSize i32) (param $pActive i32) (param $pA i32) (param $x i32) (param $wx i32)
    (local $j i32) (local $m i32) (local $a i32) (local $o i32)
    (local.set $a (local.get $pA))
    (local.set $o (i32.const 0)) ;; byte offset of block j's first member in x and wx
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $j) (local.get $nb)))
        (local.set $m (i32.load (i32.add (local.get $pSize) (i32.shl (local.get $j) (i32.const 2)))))
        (if (i32.load (i32.add (local.get $pActive) (i32.shl (local.get $j) (i32.const 2))))
          (then
            (call $block (local.get $a) (i32.add (local.get $x) (local.get $o)) (i32.add (local.get $wx) (local.get $o)) (local.get $m))))
        (local.set $o (i32.add (local.get $o) (i32.shl (local.get $m) (i32.const 3))))
        (local.set $a (i32.add (local.get $a) (i32.shl (i32.mul (local.get $m) (local.get $m)) (i32.const 3))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $blocks))))

  ;; Σ of the $bytes/8 f64 at $p (two lanes, then the odd one).
  (func $sum (param $p i32) (param $bytes i32) (result f64)
    (local $i i32) (local $acc v128) (local $s f64) (local $pairs i32)
    (local.set $pairs (i32.and (local.get $bytes) (i32.const -16)))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $i) (local.get $pairs)))
        (local.set $acc (f64x2.add (local.get $acc) (v128.load (i32.add (local.get $p) (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $each)))
    (local.set $s (f64.add (f64x2.extract_lane 0 (local.get $acc)) (f64x2.extract_lane 1 (local.get $acc))))
    (if (i32.lt_u (local.get $pairs) (local.get $bytes))
      (then (local.set $s (f64.add (local.get $s) (f64.load (i32.add (local.get $p) (local.get $pairs)))))))
    (local.get $s))

  ;; Runs x(t+1)_i = x(t)_i·(W'x(t))_i / (x(t)ᵀW'x(t)) from the barycenter e/N, with
  ;; (W'x)_i = (A'x)_i − α·x_i + C·Σ_j x_j, and stops after computing x(t+1) when
  ;; ‖x(t+1) − x(t)‖₂ < ε or t+1 ≥ T_max (docs/contract.md#ec-and-core). When x(t)ᵀW'x(t) ≤ 0 (or NaN) x stays
  ;; where it is and the run ends. After each step that does not stop, a class whose mass has
  ;; fallen below LOST = 1e-15 is dropped from the block product for good.
  (func (export "run")
    (param $n i32) (param $nb i32) (param $pSize i32) (param $pActive i32) (param $pA i32)
    (param $pX i32) (param $pNext i32) (param $pWx i32)
    (param $alpha f64) (param $shift f64) (param $eps f64) (param $tmax f64)
    (result i32)
    (local $x i32) (local $next i32) (local $tmp i32)
    (local $t i32) (local $i i32) (local $j i32) (local $m i32) (local $o i32)
    (local $bytes i32) (local $pairs i32)
    (local $sum f64) (local $den f64) (local $diff f64) (local $v f64) (local $d f64) (local $xi f64)
    (local $cv v128) (local $av v128) (local $dv v128) (local $xv v128) (local $vv v128) (local $ev v128)
    (local $acc v128) (local $acc2 v128)
    (local.set $x (local.get $pX))
    (local.set $next (local.get $pNext))
    (local.set $bytes (i32.shl (local.get $n) (i32.const 3)))
    (local.set $pairs (i32.and (local.get $bytes) (i32.const -16)))

    ;; Every class starts in play.
    (local.set $j (i32.const 0))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $j) (local.get $nb)))
        (i32.store (i32.add (local.get $pActive) (i32.shl (local.get $j) (i32.const 2))) (i32.const 1))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $each)))

    ;; x(0) = e/N, and Σx(0).
    (local.set $v (f64.div (f64.const 1) (f64.convert_i32_u (local.get $n))))
    (local.set $vv (f64x2.splat (local.get $v)))
    (local.set $i (i32.const 0))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $i) (local.get $pairs)))
        (v128.store (i32.add (local.get $x) (local.get $i)) (local.get $vv))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $each)))
    (if (i32.lt_u (local.get $pairs) (local.get $bytes))
      (then (f64.store (i32.add (local.get $x) (local.get $pairs)) (local.get $v))))
    (local.set $sum (call $sum (local.get $x) (local.get $bytes)))

    (block $stop
      (loop $iterate
        (br_if $stop (i32.eqz (f64.lt (f64.convert_i32_u (local.get $t)) (local.get $tmax))))

        ;; wx = C·Σx − α·x, then wx += A'x: wx = W'x (eq. 3's payoff on x(t)).
        (local.set $cv (f64x2.splat (f64.mul (local.get $shift) (local.get $sum))))
        (local.set $av (f64x2.splat (local.get $alpha)))
        (local.set $i (i32.const 0))
        (block $done
          (loop $each
            (br_if $done (i32.ge_u (local.get $i) (local.get $pairs)))
            (v128.store (i32.add (local.get $pWx) (local.get $i))
              (f64x2.sub (local.get $cv) (f64x2.mul (local.get $av) (v128.load (i32.add (local.get $x) (local.get $i))))))
            (local.set $i (i32.add (local.get $i) (i32.const 16)))
            (br $each)))
        (if (i32.lt_u (local.get $pairs) (local.get $bytes))
          (then
            (f64.store (i32.add (local.get $pWx) (local.get $pairs))
              (f64.sub (f64.mul (local.get $shift) (local.get $sum)) (f64.mul (local.get $alpha) (f64.load (i32.add (local.get $x) (local.get $pairs))))))))
        (call $product (local.get $nb) (local.get $pSize) (local.get $pActive) (local.get $pA) (local.get $x) (local.get $pWx))

        ;; den = x(t)ᵀW'x(t).
        (local.set $acc (v128.const f64x2 0 0))
        (local.set $i (i32.const 0))
        (block $done
          (loop $each
            (br_if $done (i32.ge_u (local.get $i) (local.get $pairs)))
            (local.set $acc (f64x2.add (local.get $acc)
              (f64x2.mul (v128.load (i32.add (local.get $x) (local.get $i))) (v128.load (i32.add (local.get $pWx) (local.get $i))))))
            (local.set $i (i32.add (local.get $i) (i32.const 16)))
            (br $each)))
        (local.set $den (f64.add (f64x2.extract_lane 0 (local.get $acc)) (f64x2.extract_lane 1 (local.get $acc))))
        (if (i32.lt_u (local.get $pairs) (local.get $bytes))
          (then
            (local.set $den (f64.add (local.get $den)
              (f64.mul (f64.load (i32.add (local.get $x) (local.get $pairs))) (f64.load (i32.add (local.get $pWx) (local.get $pairs))))))))
        (local.set $t (i32.add (local.get $t) (i32.const 1)))
        ;; den ≤ 0 (or NaN): x(t+1) = x(t), a change of 0 < ε.
        (br_if $stop (i32.eqz (f64.gt (local.get $den) (f64.const 0))))

        ;; x(t+1) = x(t)∘W'x(t) / den; diff = ‖x(t+1) − x(t)‖₂², sum = Σx(t+1).
        (local.set $dv (f64x2.splat (local.get $den)))
        (local.set $acc (v128.const f64x2 0 0))
        (local.set $acc2 (v128.const f64x2 0 0))
        (local.set $i (i32.const 0))
        (block $done
          (loop $each
            (br_if $done (i32.ge_u (local.get $i) (local.get $pairs)))
            (local.set $xv (v128.load (i32.add (local.get $x) (local.get $i))))
            (local.set $vv (f64x2.div (f64x2.mul (local.get $xv) (v128.load (i32.add (local.get $pWx) (local.get $i)))) (local.get $dv)))
            (v128.store (i32.add (local.get $next) (local.get $i)) (local.get $vv))
            (local.set $ev (f64x2.sub (local.get $vv) (local.get $xv)))
            (local.set $acc (f64x2.add (local.get $acc) (f64x2.mul (local.get $ev) (local.get $ev))))
            (local.set $acc2 (f64x2.add (local.get $acc2) (local.get $vv)))
            (local.set $i (i32.add (local.get $i) (i32.const 16)))
            (br $each)))
        (local.set $diff (f64.add (f64x2.extract_lane 0 (local.get $acc)) (f64x2.extract_lane 1 (local.get $acc))))
        (local.set $sum (f64.add (f64x2.extract_lane 0 (local.get $acc2)) (f64x2.extract_lane 1 (local.get $acc2))))
        (if (i32.lt_u (local.get $pairs) (local.get $bytes))
          (then
            (local.set $xi (f64.load (i32.add (local.get $x) (local.get $pairs))))
            (local.set $v (f64.div (f64.mul (local.get $xi) (f64.load (i32.add (local.get $pWx) (local.get $pairs)))) (local.get $den)))
            (f64.store (i32.add (local.get $next) (local.get $pairs)) (local.get $v))
            (local.set $d (f64.sub (local.get $v) (local.get $xi)))
            (local.set $diff (f64.add (local.get $diff) (f64.mul (local.get $d) (local.get $d))))
            (local.set $sum (f64.add (local.get $sum) (local.get $v)))))
        (local.set $tmp (local.get $x))
        (local.set $x (local.get $next))
        (local.set $next (local.get $tmp))
        (br_if $stop (f64.lt (f64.sqrt (local.get $diff)) (local.get $eps)))

        ;; A class whose mass fell below LOST = 1e-15 has lost for good (see replicator.ts).
        (local.set $j (i32.const 0))
        (local.set $o (local.get $x))
        (block $done
          (loop $each
            (br_if $done (i32.ge_u (local.get $j) (local.get $nb)))
            (local.set $m (i32.load (i32.add (local.get $pSize) (i32.shl (local.get $j) (i32.const 2)))))
            (if (i32.load (i32.add (local.get $pActive) (i32.shl (local.get $j) (i32.const 2))))
              (then
                (if (f64.lt (call $sum (local.get $o) (i32.shl (local.get $m) (i32.const 3))) (f64.const 1e-15))
                  (then (i32.store (i32.add (local.get $pActive) (i32.shl (local.get $j) (i32.const 2))) (i32.const 0))))))
            (local.set $o (i32.add (local.get $o) (i32.shl (local.get $m) (i32.const 3))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $each)))
        (br $iterate)))

    ;; Leave x(T) at $pX.
    (if (i32.ne (local.get $x) (local.get $pX))
      (then
        (local.set $i (i32.const 0))
        (block $done
          (loop $each
            (br_if $done (i32.ge_u (local.get $i) (local.get $bytes)))
            (i64.store (i32.add (local.get $pX) (local.get $i)) (i64.load (i32.add (local.get $x) (local.get $i))))
            (local.set $i (i32.add (local.get $i) (i32.const 8)))
            (br $each)))))
    (local.get $t)))
