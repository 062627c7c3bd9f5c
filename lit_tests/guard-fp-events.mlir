// RUN: pyfront-opt %s --split-input-file --guard-fp-events | filecheck %s

/// exp can overflow: its returned result is checked for all-finite at the
/// end of the block, by a reduction over a table of the block's small checked
/// values (one row here: passes/pooled_checks.py), guarded with the op's
/// site. tanh raises nothing: not checked.

// CHECK-LABEL: func.func @exp_and_tanh
// CHECK:         %[[E:[a-z0-9_]+]] = "pyfront.exp"(%[[X:[a-z0-9_]+]])
// CHECK-NEXT:    "pyfront.tanh"
// CHECK:         %[[ROW:.*]] = "pyfront.reshape"(%[[E]]) {shape = array<i64: 1, 4>}
// CHECK:         %[[LEAST:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[ROW]] : tensor<1x4xf32>) outs(%{{.*}} : tensor<1xi8>)
// CHECK:           math.absf
// CHECK:           arith.cmpf olt
// CHECK:         %[[FIRST:.*]] = "pyfront.slice"(%[[LEAST]]) {offsets = array<i64: 0>, sizes = array<i64: 1>, strides = array<i64: 1>}
// CHECK-NEXT:    %[[FLAG:.*]] = "pyfront.reshape"(%[[FIRST]]) {shape = array<i64>} : (tensor<1xi8>) -> tensor<i8>
// CHECK-NEXT:    %[[OK:.*]] = "pyfront.astype"(%[[FLAG]]) {dtype = "bool"}
// CHECK:         "pyfront.guard"(%[[OK]]) {kind = "fp-error", reason = "floating-point overflow in exp", site = "m.py:3:4"}
// CHECK-NOT:     "pyfront.guard"
// CHECK:         return
func.func @exp_and_tanh(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = "pyfront.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32> loc("m.py":3:4)
  %t = "pyfront.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32> loc("m.py":4:4)
  return %e, %t : tensor<4xf32>, tensor<4xf32>
}

// -----

/// The same ops on ints, comparisons, max/min and shape ops raise nothing.

// CHECK-LABEL: func.func @no_events
// CHECK-NOT:     "pyfront.guard"
// CHECK:         return
func.func @no_events(%i: tensor<4xi32>, %x: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xi1>, tensor<f32>, tensor<2x2xf32>) {
  %a = "pyfront.add"(%i, %i) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %c = "pyfront.less"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %m = "pyfront.max"(%x) {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  %r = "pyfront.reshape"(%x) {shape = array<i64: 2, 2>} : (tensor<4xf32>) -> tensor<2x2xf32>
  return %a, %c, %m, %r : tensor<4xi32>, tensor<4xi1>, tensor<f32>, tensor<2x2xf32>
}

// -----

/// A reduction (summation order differs from NumPy's): any NaN or inf in the
/// result fails the guard.

// CHECK-LABEL: func.func @sum
// CHECK:         %[[S:[a-z0-9_]+]] = "pyfront.sum"
// CHECK:         %[[ROW:.*]] = "pyfront.reshape"(%[[S]]) {shape = array<i64: 1, 1>}
// CHECK:         linalg.generic {{.*}} ins(%[[ROW]] : tensor<1x1xf32>)
// CHECK:           math.absf
// CHECK-NEXT:      arith.constant 0x7F800000
// CHECK-NEXT:      arith.cmpf olt
// CHECK:         %[[OK:.*]] = "pyfront.astype"
// CHECK:         "pyfront.guard"(%[[OK]]) {kind = "fp-error", reason = "floating-point overflow or invalid value in sum"
func.func @sum(%x: tensor<4xf32>) -> tensor<f32> {
  %s = "pyfront.sum"(%x) {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

/// float -> int casts: NaN, inf and values out of range are invalid (NumPy
/// warns; LLVM's fptosi would give poison). -2^31 - 1 is not a float32, so the
/// lower bound is >= -2^31. Int -> float and float -> bool casts raise nothing.

// CHECK-LABEL: func.func @casts
// CHECK:         "pyfront.astype"(%[[X:[a-z0-9_]+]]) {dtype = "int32"}
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : tensor<4xf32>)
// CHECK:           arith.constant -2.14748365E+9 : f32
// CHECK-NEXT:      arith.cmpf oge
// CHECK:           arith.constant 2.14748365E+9 : f32
// CHECK-NEXT:      arith.cmpf olt
// CHECK:         "pyfront.guard"({{.*}}) {kind = "fp-error", reason = "floating-point invalid value in astype"
// CHECK-NOT:     "pyfront.guard"
// CHECK:         return
func.func @casts(%x: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xi32>, tensor<4xf32>, tensor<4xi1>) {
  %c = "pyfront.astype"(%x) {dtype = "int32"} : (tensor<4xf32>) -> tensor<4xi32>
  %f = "pyfront.astype"(%i) {dtype = "float32"} : (tensor<4xi64>) -> tensor<4xf32>
  %b = "pyfront.astype"(%x) {dtype = "bool"} : (tensor<4xf32>) -> tensor<4xi1>
  return %c, %f, %b : tensor<4xi32>, tensor<4xf32>, tensor<4xi1>
}

// -----

/// float64 -> float32 can overflow (a finite value becomes inf).

// CHECK-LABEL: func.func @narrowing
// CHECK:         "pyfront.astype"(%{{.*}}) {dtype = "float32"}
// CHECK:         "pyfront.guard"({{.*}}) {kind = "fp-error", reason = "floating-point overflow in astype"
func.func @narrowing(%x: tensor<4xf64>) -> tensor<4xf32> {
  %c = "pyfront.astype"(%x) {dtype = "float32"} : (tensor<4xf64>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

/// Ops in a loop: their flags are ANDed into one more iter_arg, guarded after
/// the loop (guards may only sit in the entry block).

// CHECK-LABEL: func.func @loop
// CHECK:         %[[TRUE:.*]] = arith.constant dense<true> : tensor<i1>
// CHECK:         %[[R:.*]]:2 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[HELD:.*]] = %[[TRUE]]) -> (tensor<4xf32>, tensor<i1>)
// CHECK:           %[[L:.*]] = "pyfront.log"(%[[ACC]])
// CHECK:           linalg.generic
// CHECK:           "pyfront.slice"
// CHECK-NEXT:      "pyfront.reshape"
// CHECK-NEXT:      %[[OK:.*]] = "pyfront.astype"
// CHECK-NEXT:      %[[BOTH:.*]] = "pyfront.logical_and"(%[[HELD]], %[[OK]])
// CHECK-NEXT:      scf.yield %[[L]], %[[BOTH]] : tensor<4xf32>, tensor<i1>
// CHECK:         "pyfront.guard"(%[[R]]#1) {kind = "fp-error", reason = "floating-point divide by zero or invalid value in log inside the loop", site = "m.py:9:2"}
// CHECK:         return %[[R]]#0
func.func @loop(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<4xf32>) {
    %l = "pyfront.log"(%acc) : (tensor<4xf32>) -> tensor<4xf32> loc("m.py":10:4)
    scf.yield %l : tensor<4xf32>
  } loc("m.py":9:2)
  return %r : tensor<4xf32>
}

// -----

/// A branch: each side yields its flag (true on a side with no check).

// CHECK-LABEL: func.func @branch
// CHECK:         %[[R:.*]]:2 = scf.if %{{.*}} -> (tensor<4xf32>, tensor<i1>)
// CHECK:           "pyfront.sqrt"
// CHECK:           scf.yield %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<i1>
// CHECK:         } else {
// CHECK-NEXT:      %[[T:.*]] = arith.constant dense<true> : tensor<i1>
// CHECK-NEXT:      scf.yield %{{.*}}, %[[T]] : tensor<4xf32>, tensor<i1>
// CHECK:         "pyfront.guard"(%[[R]]#1) {kind = "fp-error", reason = "floating-point invalid value in sqrt inside the branch"
func.func @branch(%c: i1, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = scf.if %c -> (tensor<4xf32>) {
    %s = "pyfront.sqrt"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

/// A NaN or inf survives log, so exp's result is not checked on its own: the
/// returned log result covers both ops (the reason names both).

// CHECK-LABEL: func.func @deferred
// CHECK:         %[[E:[a-z0-9_]+]] = "pyfront.exp"
// CHECK-NEXT:    %[[L:[a-z0-9_]+]] = "pyfront.log"(%[[E]])
// CHECK:         "pyfront.reshape"(%[[L]])
// CHECK:         linalg.generic
// CHECK-NOT:     linalg.generic
// CHECK:         "pyfront.slice"
// CHECK-NEXT:    "pyfront.reshape"
// CHECK-NEXT:    %[[OK:.*]] = "pyfront.astype"
// CHECK:         "pyfront.guard"(%[[OK]]) {kind = "fp-error", reason = "floating-point overflow in exp; or divide by zero or invalid value in log at m.py:2:4", site = "m.py:1:4"}
// CHECK-NOT:     "pyfront.guard"
func.func @deferred(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = "pyfront.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32> loc("m.py":1:4)
  %l = "pyfront.log"(%e) : (tensor<4xf32>) -> tensor<4xf32> loc("m.py":2:4)
  return %l : tensor<4xf32>
}

// -----

/// tanh maps inf to 1: instead of checking the exp result it reads, its
/// result becomes t - (e - e), which is t bit for bit where e is finite and
/// NaN where it is not, and carries exp's taint on. true_divide (x / inf is
/// 0) passes it on the same way; the returned value's one check covers all.

// CHECK-LABEL: func.func @absorbed
// CHECK:         %[[E:[a-z0-9_]+]] = "pyfront.exp"
// CHECK-NEXT:    %[[T:[a-z0-9_]+]] = "pyfront.tanh"(%[[E]])
// CHECK-NEXT:    %[[Z:[a-z0-9_]+]] = "pyfront.subtract"(%[[E]], %[[E]])
// CHECK-NEXT:    %[[T2:[a-z0-9_]+]] = "pyfront.subtract"(%[[T]], %[[Z]])
// CHECK-NEXT:    %[[D:[a-z0-9_]+]] = "pyfront.true_divide"(%[[T2]], %[[T2]])
// CHECK-NEXT:    %[[Z2:[a-z0-9_]+]] = "pyfront.subtract"(%[[T2]], %[[T2]])
// CHECK-NEXT:    %[[D2:[a-z0-9_]+]] = "pyfront.subtract"(%[[D]], %[[Z2]])
// CHECK:         "pyfront.reshape"(%[[D2]])
// CHECK:         linalg.generic
// CHECK-NOT:     linalg.generic
// CHECK:         "pyfront.slice"
// CHECK-NEXT:    "pyfront.reshape"
// CHECK-NEXT:    %[[OK:.*]] = "pyfront.astype"
// CHECK:         "pyfront.guard"(%[[OK]]) {kind = "fp-error", reason = "floating-point overflow in exp; or divide by zero or overflow or invalid value in true_divide at m.py:2:4", site = "m.py:1:4"}
// CHECK:         return %[[D2]]
func.func @absorbed(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = "pyfront.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32> loc("m.py":1:4)
  %t = "pyfront.tanh"(%e) : (tensor<4xf32>) -> tensor<4xf32> loc("m.py":1:8)
  %d = "pyfront.true_divide"(%t, %t) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("m.py":2:4)
  return %d : tensor<4xf32>
}

// -----

/// Forwarding through tanh keeps IREE's dispatch of a matmul (with the bias
/// add, tanh and the next matmul's packing it fuses) at one result: a check
/// of tanh's input made it write that value too, and the data-tiled
/// dispatch then needed more than IREE's CPU stack limit (mlp_forward
/// 64x256-512-10). A bias of another shape broadcasts; the check of the
/// returned result covers both layers.

// CHECK-LABEL: func.func @dense_tanh_dense
// CHECK:         %[[M:[a-z0-9_]+]] = "pyfront.matmul"
// CHECK-NEXT:    %[[H:[a-z0-9_]+]] = "pyfront.add"(%[[M]], %{{.*}})
// CHECK-NEXT:    %[[T:[a-z0-9_]+]] = "pyfront.tanh"(%[[H]])
// CHECK-NEXT:    %[[Z:[a-z0-9_]+]] = "pyfront.subtract"(%[[H]], %[[H]])
// CHECK-NEXT:    %[[T2:[a-z0-9_]+]] = "pyfront.subtract"(%[[T]], %[[Z]])
// CHECK-NEXT:    %[[Y:[a-z0-9_]+]] = "pyfront.matmul"(%[[T2]], %{{.*}})
// CHECK-NOT:     util.optimization_barrier
// CHECK:         "pyfront.reshape"(%[[Y]]) {shape = array<i64: 1, 640>}
// CHECK:         "pyfront.guard"({{.*}}) {kind = "fp-error", reason = "floating-point overflow or invalid value in matmul; or overflow or invalid value in add at m.py:1:12; or overflow or invalid value in matmul at m.py:2:4", site = "m.py:1:8"}
// CHECK-NOT:     "pyfront.guard"
// CHECK:         return %[[Y]]
func.func @dense_tanh_dense(%x: tensor<64x256xf32>, %w1: tensor<256x512xf32>, %b1: tensor<512xf32>, %w2: tensor<512x10xf32>) -> tensor<64x10xf32> {
  %m = "pyfront.matmul"(%x, %w1) : (tensor<64x256xf32>, tensor<256x512xf32>) -> tensor<64x512xf32> loc("m.py":1:8)
  %h = "pyfront.add"(%m, %b1) : (tensor<64x512xf32>, tensor<512xf32>) -> tensor<64x512xf32> loc("m.py":1:12)
  %t = "pyfront.tanh"(%h) : (tensor<64x512xf32>) -> tensor<64x512xf32> loc("m.py":1:4)
  %y = "pyfront.matmul"(%t, %w2) : (tensor<64x512xf32>, tensor<512x10xf32>) -> tensor<64x10xf32> loc("m.py":2:4)
  return %y : tensor<64x10xf32>
}

// -----

/// Where the taint cannot be passed on (a slice, a comparison), a matmul's
/// result is checked through util.optimization_barrier, which all its users
/// read: IREE's dispatch for the matmul then has that value as its only
/// result; the check is one reduction over it. (Only for a value too large
/// to pool: a pooled check reads a copy of the value.)

// CHECK-LABEL: func.func @matmul_sliced
// CHECK:         %[[M:[a-z0-9_]+]] = "pyfront.matmul"
// CHECK-NEXT:    %[[MB:.*]] = util.optimization_barrier %[[M]] : tensor<128x64xf32>
// CHECK-NEXT:    "pyfront.slice"(%[[MB]])
// CHECK-NEXT:    "pyfront.less"(%[[MB]], %[[MB]])
// CHECK:         %[[LEAST:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[MB]] : tensor<128x64xf32>) outs(%{{.*}} : tensor<i8>)
// CHECK:         %[[OK:.*]] = "pyfront.astype"(%[[LEAST]]) {dtype = "bool"}
// CHECK:         "pyfront.guard"(%[[OK]]) {kind = "fp-error", reason = "floating-point overflow or invalid value in matmul", site = "m.py:1:8"}
func.func @matmul_sliced(%x: tensor<128x4xf32>, %w: tensor<4x64xf32>) -> (tensor<1x64xf32>, tensor<128x64xi1>) {
  %m = "pyfront.matmul"(%x, %w) : (tensor<128x4xf32>, tensor<4x64xf32>) -> tensor<128x64xf32> loc("m.py":1:8)
  %s = "pyfront.slice"(%m) {offsets = array<i64: 0, 0>, sizes = array<i64: 1, 64>, strides = array<i64: 1, 1>} : (tensor<128x64xf32>) -> tensor<1x64xf32> loc("m.py":2:8)
  %c = "pyfront.less"(%m, %m) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xi1> loc("m.py":3:8)
  return %s, %c : tensor<1x64xf32>, tensor<128x64xi1>
}

// -----

/// exp's result inside the first loop is covered by the add it feeds (the
/// yielded value, checked): it is not checked again before the second loop,
/// where it would not even be defined.

// CHECK-LABEL: func.func @two_loops
// CHECK:         scf.for
// CHECK:           "pyfront.exp"
// CHECK:           %[[A:[a-z0-9_]+]] = "pyfront.add"
// CHECK:           %[[ROW:.*]] = "pyfront.reshape"(%[[A]])
// CHECK:           linalg.generic {{.*}} ins(%[[ROW]] : tensor<1x4xf32>)
// CHECK-NOT:       linalg.generic
// CHECK:           scf.yield
// CHECK:         scf.for
// CHECK:           "pyfront.log"
// CHECK:         "pyfront.guard"({{.*}}) {kind = "fp-error", reason = "floating-point {{.*}} in add, exp inside the loop"
// CHECK-NEXT:    "pyfront.guard"({{.*}}) {kind = "fp-error", reason = "floating-point divide by zero or invalid value in log inside the loop"
func.func @two_loops(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<4xf32>) {
    %e = "pyfront.exp"(%acc) : (tensor<4xf32>) -> tensor<4xf32>
    %a = "pyfront.add"(%e, %e) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  }
  %s = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %r) -> (tensor<4xf32>) {
    %l = "pyfront.log"(%acc) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %l : tensor<4xf32>
  }
  return %s : tensor<4xf32>
}

// -----

/// Not with a dynamic shape: IREE cannot resolve tensor.dim through the barrier.

// CHECK-LABEL: func.func @matmul_sliced_dynamic
// CHECK-NOT:     util.optimization_barrier
// CHECK:         "pyfront.guard"
func.func @matmul_sliced_dynamic(%x: tensor<?x4xf32>, %w: tensor<4x6xf32>) -> tensor<?x6xi1> {
  %m = "pyfront.matmul"(%x, %w) : (tensor<?x4xf32>, tensor<4x6xf32>) -> tensor<?x6xf32> loc("m.py":1:8)
  %c = "pyfront.less"(%m, %m) : (tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x6xi1> loc("m.py":3:8)
  return %c : tensor<?x6xi1>
}

// -----

/// An op that hides NaN/inf passes a taint on only when its other float
/// operands are finite constants: where's -inf (or any input) can be
/// non-finite with no event, and would make the passed-on check fail
/// needlessly; the tainted operand is checked instead. minimum with 3.0
/// passes exp's taint on.

// CHECK-LABEL: func.func @constants
// CHECK:         %[[E:[a-z0-9_]+]] = "pyfront.exp"(%{{.*}})
// CHECK-NEXT:    %[[F:[a-z0-9_]+]] = "pyfront.exp"(%{{.*}})
// CHECK-NEXT:    %[[W:[a-z0-9_]+]] = "pyfront.where"(%{{.*}}, %[[E]], %{{.*}})
// CHECK-NEXT:    %[[M:[a-z0-9_]+]] = "pyfront.minimum"(%[[F]], %{{.*}})
// CHECK-NEXT:    %[[Z:[a-z0-9_]+]] = "pyfront.subtract"(%[[F]], %[[F]])
// CHECK-NEXT:    %[[M2:[a-z0-9_]+]] = "pyfront.subtract"(%[[M]], %[[Z]])
// CHECK:         %[[ER:.*]] = "pyfront.reshape"(%[[E]]) {shape = array<i64: 1, 4>}
// CHECK-NEXT:    %[[MR:.*]] = "pyfront.reshape"(%[[M2]]) {shape = array<i64: 1, 4>}
// CHECK:         "pyfront.update_slice"(%{{.*}}, %[[ER]]) {offsets = array<i64: 0, 0>
// CHECK-NEXT:    "pyfront.update_slice"(%{{.*}}, %[[MR]]) {offsets = array<i64: 0, 4>
// CHECK:         return %[[W]], %[[M2]]
func.func @constants(%c: tensor<4xi1>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %inf = arith.constant dense<0xFF800000> : tensor<4xf32>
  %three = arith.constant dense<3.0> : tensor<4xf32>
  %e = "pyfront.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32> loc("m.py":1:4)
  %f = "pyfront.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32> loc("m.py":1:8)
  %w = "pyfront.where"(%c, %e, %inf) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("m.py":2:4)
  %m = "pyfront.minimum"(%f, %three) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("m.py":3:4)
  return %w, %m : tensor<4xf32>, tensor<4xf32>
}

// -----

/// At most 16 values per reduction: IREE's HAL takes 32 buffers per dispatch.

// CHECK-LABEL: func.func @many
// CHECK-COUNT-2: "pyfront.guard"
// CHECK-NOT:     "pyfront.guard"
func.func @many(%x0: tensor<4xf32>, %x1: tensor<4xf32>, %x2: tensor<4xf32>, %x3: tensor<4xf32>, %x4: tensor<4xf32>, %x5: tensor<4xf32>, %x6: tensor<4xf32>, %x7: tensor<4xf32>, %x8: tensor<4xf32>, %x9: tensor<4xf32>, %x10: tensor<4xf32>, %x11: tensor<4xf32>, %x12: tensor<4xf32>, %x13: tensor<4xf32>, %x14: tensor<4xf32>, %x15: tensor<4xf32>, %x16: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e0 = "pyfront.exp"(%x0) : (tensor<4xf32>) -> tensor<4xf32>
  %e1 = "pyfront.exp"(%x1) : (tensor<4xf32>) -> tensor<4xf32>
  %e2 = "pyfront.exp"(%x2) : (tensor<4xf32>) -> tensor<4xf32>
  %e3 = "pyfront.exp"(%x3) : (tensor<4xf32>) -> tensor<4xf32>
  %e4 = "pyfront.exp"(%x4) : (tensor<4xf32>) -> tensor<4xf32>
  %e5 = "pyfront.exp"(%x5) : (tensor<4xf32>) -> tensor<4xf32>
  %e6 = "pyfront.exp"(%x6) : (tensor<4xf32>) -> tensor<4xf32>
  %e7 = "pyfront.exp"(%x7) : (tensor<4xf32>) -> tensor<4xf32>
  %e8 = "pyfront.exp"(%x8) : (tensor<4xf32>) -> tensor<4xf32>
  %e9 = "pyfront.exp"(%x9) : (tensor<4xf32>) -> tensor<4xf32>
  %e10 = "pyfront.exp"(%x10) : (tensor<4xf32>) -> tensor<4xf32>
  %e11 = "pyfront.exp"(%x11) : (tensor<4xf32>) -> tensor<4xf32>
  %e12 = "pyfront.exp"(%x12) : (tensor<4xf32>) -> tensor<4xf32>
  %e13 = "pyfront.exp"(%x13) : (tensor<4xf32>) -> tensor<4xf32>
  %e14 = "pyfront.exp"(%x14) : (tensor<4xf32>) -> tensor<4xf32>
  %e15 = "pyfront.exp"(%x15) : (tensor<4xf32>) -> tensor<4xf32>
  %e16 = "pyfront.exp"(%x16) : (tensor<4xf32>) -> tensor<4xf32>
  return %e0, %e1, %e2, %e3, %e4, %e5, %e6, %e7, %e8, %e9, %e10, %e11, %e12, %e13, %e14, %e15, %e16 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}


// -----

/// Slices of a checked value pass its taint on when together (with its readers
/// that keep NaN/inf) they read all of it: the slice of the taint is the taint
/// of the slice, so the matmul needs no check and no barrier (an LSTM's gates);
/// the tanh of each slice passes the taint on, and the returned values are
/// checked.

// CHECK-LABEL: func.func @gates_cover
// CHECK-NOT:     util.optimization_barrier
// CHECK:         %[[M:[a-z0-9_]+]] = "pyfront.matmul"
// CHECK-NEXT:    %[[A:[a-z0-9_]+]] = "pyfront.slice"(%[[M]])
// CHECK-NEXT:    %[[B:[a-z0-9_]+]] = "pyfront.slice"(%[[M]])
// CHECK-NEXT:    %[[TA:[a-z0-9_]+]] = "pyfront.tanh"(%[[A]])
// CHECK-NEXT:    %[[DA:[a-z0-9_]+]] = "pyfront.subtract"(%[[A]], %[[A]])
// CHECK-NEXT:    %[[RA:[a-z0-9_]+]] = "pyfront.subtract"(%[[TA]], %[[DA]])
// CHECK-NEXT:    %[[TB:[a-z0-9_]+]] = "pyfront.tanh"(%[[B]])
// CHECK-NEXT:    %[[DB:[a-z0-9_]+]] = "pyfront.subtract"(%[[B]], %[[B]])
// CHECK-NEXT:    %[[RB:[a-z0-9_]+]] = "pyfront.subtract"(%[[TB]], %[[DB]])
// CHECK-NOT:     ins(%[[M]]
// CHECK:         "pyfront.reshape"(%[[RB]]) {shape = array<i64: 1, 32>}
// CHECK:         "pyfront.reshape"(%[[RA]]) {shape = array<i64: 1, 16>}
// CHECK:         "pyfront.guard"({{.*}}) {kind = "fp-error", reason = "floating-point overflow or invalid value in matmul", site = "m.py:1:8"}
// CHECK:         return %[[RA]], %[[RB]]
func.func @gates_cover(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>) -> (tensor<8x2xf32>, tensor<8x4xf32>) {
  %m = "pyfront.matmul"(%x, %w) : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32> loc("m.py":1:8)
  %a = "pyfront.slice"(%m) {offsets = array<i64: 0, 0>, sizes = array<i64: 8, 2>, strides = array<i64: 1, 1>} : (tensor<8x6xf32>) -> tensor<8x2xf32> loc("m.py":2:8)
  %b = "pyfront.slice"(%m) {offsets = array<i64: 0, 2>, sizes = array<i64: 8, 4>, strides = array<i64: 1, 1>} : (tensor<8x6xf32>) -> tensor<8x4xf32> loc("m.py":3:8)
  %ta = "pyfront.tanh"(%a) : (tensor<8x2xf32>) -> tensor<8x2xf32> loc("m.py":4:8)
  %tb = "pyfront.tanh"(%b) : (tensor<8x4xf32>) -> tensor<8x4xf32> loc("m.py":5:8)
  return %ta, %tb : tensor<8x2xf32>, tensor<8x4xf32>
}

// -----

/// Column 32 is read by no slice: a NaN there would vanish, so the matmul's
/// result is checked (behind the barrier) and the slices carry nothing.

// CHECK-LABEL: func.func @gates_leave_a_column
// CHECK:         %[[M:[a-z0-9_]+]] = "pyfront.matmul"
// CHECK-NEXT:    %[[MB:.*]] = util.optimization_barrier %[[M]] : tensor<128x64xf32>
// CHECK-NOT:     "pyfront.subtract"
// CHECK:         linalg.generic {{.*}} ins(%[[MB]] : tensor<128x64xf32>)
// CHECK:         "pyfront.guard"
func.func @gates_leave_a_column(%x: tensor<128x4xf32>, %w: tensor<4x64xf32>) -> (tensor<128x32xf32>, tensor<128x31xf32>) {
  %m = "pyfront.matmul"(%x, %w) : (tensor<128x4xf32>, tensor<4x64xf32>) -> tensor<128x64xf32> loc("m.py":1:8)
  %a = "pyfront.slice"(%m) {offsets = array<i64: 0, 0>, sizes = array<i64: 128, 32>, strides = array<i64: 1, 1>} : (tensor<128x64xf32>) -> tensor<128x32xf32> loc("m.py":2:8)
  %b = "pyfront.slice"(%m) {offsets = array<i64: 0, 33>, sizes = array<i64: 128, 31>, strides = array<i64: 1, 1>} : (tensor<128x64xf32>) -> tensor<128x31xf32> loc("m.py":3:8)
  %ta = "pyfront.tanh"(%a) : (tensor<128x32xf32>) -> tensor<128x32xf32> loc("m.py":4:8)
  %tb = "pyfront.tanh"(%b) : (tensor<128x31xf32>) -> tensor<128x31xf32> loc("m.py":5:8)
  return %ta, %tb : tensor<128x32xf32>, tensor<128x31xf32>
}

// -----

/// Strided slices count as reading nothing (their elements are no box), even
/// where together they read every element.

// CHECK-LABEL: func.func @strided_halves
// CHECK:         %[[M:[a-z0-9_]+]] = "pyfront.matmul"
// CHECK-NEXT:    %[[MB:.*]] = util.optimization_barrier %[[M]] : tensor<128x64xf32>
// CHECK-NOT:     "pyfront.subtract"
// CHECK:         linalg.generic {{.*}} ins(%[[MB]] : tensor<128x64xf32>)
// CHECK:         "pyfront.guard"
func.func @strided_halves(%x: tensor<128x4xf32>, %w: tensor<4x64xf32>) -> (tensor<128x32xf32>, tensor<128x32xf32>) {
  %m = "pyfront.matmul"(%x, %w) : (tensor<128x4xf32>, tensor<4x64xf32>) -> tensor<128x64xf32> loc("m.py":1:8)
  %a = "pyfront.slice"(%m) {offsets = array<i64: 0, 0>, sizes = array<i64: 128, 32>, strides = array<i64: 1, 2>} : (tensor<128x64xf32>) -> tensor<128x32xf32> loc("m.py":2:8)
  %b = "pyfront.slice"(%m) {offsets = array<i64: 0, 1>, sizes = array<i64: 128, 32>, strides = array<i64: 1, 2>} : (tensor<128x64xf32>) -> tensor<128x32xf32> loc("m.py":3:8)
  %ta = "pyfront.tanh"(%a) : (tensor<128x32xf32>) -> tensor<128x32xf32> loc("m.py":4:8)
  %tb = "pyfront.tanh"(%b) : (tensor<128x32xf32>) -> tensor<128x32xf32> loc("m.py":5:8)
  return %ta, %tb : tensor<128x32xf32>, tensor<128x32xf32>
}

// -----

/// A value some reader keeps all of (the next matmul) needs no check where
/// another reader would hide a NaN/inf (the comparison, an MLP's `h > 0`):
/// the matmul's result carries the taint and is checked; no barrier on `h`.

// CHECK-LABEL: func.func @relu_read_by_matmul_and_compare
// CHECK-NOT:     util.optimization_barrier
// CHECK:         %[[MAX:[a-z0-9_]+]] = "pyfront.maximum"
// CHECK-NEXT:    %[[D:[a-z0-9_]+]] = "pyfront.subtract"
// CHECK-NEXT:    %[[H:[a-z0-9_]+]] = "pyfront.subtract"(%[[MAX]], %[[D]])
// CHECK-NEXT:    %[[Y:[a-z0-9_]+]] = "pyfront.matmul"(%[[H]], %{{.*}})
// CHECK-NEXT:    "pyfront.greater"(%[[H]], %{{.*}})
// CHECK-NOT:     ins(%[[H]]
// CHECK:         "pyfront.reshape"(%[[Y]])
// CHECK:         "pyfront.guard"({{.*}}) {kind = "fp-error", reason = "floating-point overflow or invalid value in matmul; or overflow or invalid value in matmul at m.py:3:8", site = "m.py:1:8"}
// CHECK-NOT:     "pyfront.guard"
func.func @relu_read_by_matmul_and_compare(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>, %v: tensor<6x3xf32>) -> (tensor<8x3xf32>, tensor<8x6xi1>) {
  %m = "pyfront.matmul"(%x, %w) : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32> loc("m.py":1:8)
  %zero = arith.constant dense<0.0> : tensor<f32>
  %h = "pyfront.maximum"(%m, %zero) : (tensor<8x6xf32>, tensor<f32>) -> tensor<8x6xf32> loc("m.py":2:8)
  %y = "pyfront.matmul"(%h, %v) : (tensor<8x6xf32>, tensor<6x3xf32>) -> tensor<8x3xf32> loc("m.py":3:8)
  %c = "pyfront.greater"(%h, %zero) : (tensor<8x6xf32>, tensor<f32>) -> tensor<8x6xi1> loc("m.py":4:8)
  return %y, %c : tensor<8x3xf32>, tensor<8x6xi1>
}

// -----

/// Inside `with np.errstate(divide="ignore", invalid="ignore")` the front end
/// marks the ops it builds with the events ignored there (`pyfront.fp_ignored`):
/// a log that can raise nothing else is not checked.

// CHECK-LABEL: func.func @log_under_errstate
// CHECK-NOT:     "pyfront.guard"
// CHECK:         return
func.func @log_under_errstate(%x: tensor<4xf32>) -> tensor<4xf32> {
  %l = "pyfront.log"(%x) {pyfront.fp_ignored = ["divide", "invalid"]} : (tensor<4xf32>) -> tensor<4xf32> loc("m.py":2:4)
  return %l : tensor<4xf32>
}

// -----

/// Checked per op, a division under `np.errstate(divide="ignore")` is checked
/// for overflow only: an inf from finite operands counts where the divisor is
/// not zero (an inf from a zero divisor is the ignored divide by zero), a NaN
/// from NaN-free ones (invalid).

// CHECK-LABEL: func.func @divide_ignoring_zero_divisors
// CHECK:         %[[Q:[a-z0-9_]+]] = "pyfront.true_divide"(%[[A:[a-z0-9_]+]], %[[B:[a-z0-9_]+]])
// CHECK:         linalg.generic {{.*}} ins(%[[Q]], %[[A]], %[[B]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK:           arith.cmpf une, %{{.*}}, %{{.*}} : f32
// CHECK:         "pyfront.guard"(%{{.*}}) {kind = "fp-error", reason = "floating-point overflow or invalid value in true_divide", site = "m.py:3:4"}
module attributes {pyfront.fp_checks_per_op} {
  func.func @divide_ignoring_zero_divisors(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    %q = "pyfront.true_divide"(%a, %b) {pyfront.fp_ignored = ["divide"]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("m.py":3:4)
    return %q : tensor<4xf32>
  }
}

// -----

/// Small values of different shapes share one reduction: each group is a row
/// of one table (flattened and written into a table of 0.0, which is finite),
/// and each row's flag is guarded with its own reason (passes/pooled_checks.py).

// CHECK-LABEL: func.func @pooled_rows
// CHECK:         %[[E:[a-z0-9_]+]] = "pyfront.exp"
// CHECK-NEXT:    %[[F:[a-z0-9_]+]] = "pyfront.exp"
// CHECK:         %[[WIDE:.*]] = "pyfront.reshape"(%[[E]]) {shape = array<i64: 1, 6>}
// CHECK-NEXT:    %[[NARROW:.*]] = "pyfront.reshape"(%[[F]]) {shape = array<i64: 1, 4>}
// CHECK-NEXT:    %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : tensor<2x6xf32>
// CHECK-NEXT:    %[[ROW0:.*]] = "pyfront.update_slice"(%[[ZEROS]], %[[WIDE]]) {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>}
// CHECK-NEXT:    %[[TABLE:.*]] = "pyfront.update_slice"(%[[ROW0]], %[[NARROW]]) {offsets = array<i64: 1, 0>, strides = array<i64: 1, 1>} : (tensor<2x6xf32>, tensor<1x4xf32>) -> tensor<2x6xf32>
// CHECK:         %[[LEAST:.*]] = linalg.generic {{.*}} ins(%[[TABLE]] : tensor<2x6xf32>) outs(%{{.*}} : tensor<2xi8>)
// CHECK:         "pyfront.slice"(%[[LEAST]]) {offsets = array<i64: 0>
// CHECK:         "pyfront.slice"(%[[LEAST]]) {offsets = array<i64: 1>
// CHECK:         "pyfront.guard"({{.*}}) {kind = "fp-error", reason = "floating-point overflow in exp", site = "m.py:1:4"}
// CHECK-NEXT:    "pyfront.guard"({{.*}}) {kind = "fp-error", reason = "floating-point overflow in exp", site = "m.py:2:4"}
// CHECK-NOT:     "pyfront.guard"
func.func @pooled_rows(%x: tensor<2x3xf32>, %y: tensor<4xf32>) -> (tensor<2x3xf32>, tensor<4xf32>) {
  %e = "pyfront.exp"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("m.py":1:4)
  %f = "pyfront.exp"(%y) : (tensor<4xf32>) -> tensor<4xf32> loc("m.py":2:4)
  return %e, %f : tensor<2x3xf32>, tensor<4xf32>
}

// -----

/// A value of more than PYFRONT_POOL_MAX_ELEMENTS (4096) elements gets its own
/// reduction: per-element flags (which IREE fuses into the producer's
/// dispatch) and their min; a copy into a table would cost a pass over it.

// CHECK-LABEL: func.func @large_value_alone
// CHECK:         %[[E:[a-z0-9_]+]] = "pyfront.exp"
// CHECK:         %[[F:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[E]] : tensor<8192xf32>) outs(%{{.*}} : tensor<8192xi8>)
// CHECK:         %[[LEAST:.*]] = "pyfront.min"(%[[F]]) {axes = array<i64: 0>, keepdims = false}
// CHECK-NEXT:    %[[OK:.*]] = "pyfront.astype"(%[[LEAST]]) {dtype = "bool"}
// CHECK-NEXT:    "pyfront.guard"(%[[OK]]) {kind = "fp-error", reason = "floating-point overflow in exp", site = "m.py:1:4"}
// CHECK-NOT:     "pyfront.update_slice"
func.func @large_value_alone(%x: tensor<8192xf32>) -> tensor<8192xf32> {
  %e = "pyfront.exp"(%x) : (tensor<8192xf32>) -> tensor<8192xf32> loc("m.py":1:4)
  return %e : tensor<8192xf32>
}

// -----

/// slice_grad places every element of its cotangent (operand 0) in its
/// result, so a NaN/inf there shows in the result: the cotangent needs no
/// check of its own (one use: IREE can write it in place), the result carries
/// its taint to the return, checked there. Of `like` only the shape is read:
/// a tainted `like` is checked where slice_grad reads it (both checks share one
/// reduction and guard: same shape).

// CHECK-LABEL: func.func @slice_grad_keeps_its_cotangent
// CHECK:         %[[CT:[a-z0-9_]+]] = "pyfront.exp"(%{{.*}}) : (tensor<2x2xf32>)
// CHECK-NEXT:    %[[LIKE:[a-z0-9_]+]] = "pyfront.exp"(%{{.*}}) : (tensor<2x8xf32>)
// CHECK-NEXT:    %[[G:[a-z0-9_]+]] = "pyfront.slice_grad"(%[[CT]], %[[LIKE]])
// CHECK-NOT:     "pyfront.reshape"(%[[CT]])
// CHECK:         "pyfront.reshape"(%[[LIKE]]) {shape = array<i64: 1, 16>}
// CHECK:         "pyfront.reshape"(%[[G]]) {shape = array<i64: 1, 16>}
// CHECK-NOT:     "pyfront.reshape"(%[[CT]])
// CHECK:         "pyfront.guard"({{.*}}) {kind = "fp-error", reason = "floating-point overflow in exp; or overflow in exp at m.py:1:4", site = "m.py:2:4"}
// CHECK-NOT:     "pyfront.guard"
func.func @slice_grad_keeps_its_cotangent(%x: tensor<2x2xf32>, %y: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %ct = "pyfront.exp"(%x) : (tensor<2x2xf32>) -> tensor<2x2xf32> loc("m.py":1:4)
  %like = "pyfront.exp"(%y) : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("m.py":2:4)
  %g = "pyfront.slice_grad"(%ct, %like) {offsets = array<i64: 0, 2>, strides = array<i64: 1, 1>} : (tensor<2x2xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

/// update_slice writes every element of the value (operand 1): its taint goes
/// on in the result. The elements of `x` under it are dropped: a tainted `x`
/// is checked where update_slice reads it.

// CHECK-LABEL: func.func @update_slice_keeps_its_value
// CHECK:         %[[X:[a-z0-9_]+]] = "pyfront.exp"(%{{.*}}) : (tensor<2x8xf32>)
// CHECK-NEXT:    %[[V:[a-z0-9_]+]] = "pyfront.exp"(%{{.*}}) : (tensor<2x2xf32>)
// CHECK-NEXT:    %[[U:[a-z0-9_]+]] = "pyfront.update_slice"(%[[X]], %[[V]])
// CHECK-NOT:     "pyfront.reshape"(%[[V]])
// CHECK:         "pyfront.reshape"(%[[X]]) {shape = array<i64: 1, 16>}
// CHECK:         "pyfront.reshape"(%[[U]]) {shape = array<i64: 1, 16>}
// CHECK-NOT:     "pyfront.reshape"(%[[V]])
// CHECK:         "pyfront.guard"({{.*}}) {kind = "fp-error", reason = "floating-point overflow in exp; or overflow in exp at m.py:2:4", site = "m.py:1:4"}
// CHECK-NOT:     "pyfront.guard"
func.func @update_slice_keeps_its_value(%x: tensor<2x8xf32>, %y: tensor<2x2xf32>) -> tensor<2x8xf32> {
  %a = "pyfront.exp"(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("m.py":1:4)
  %v = "pyfront.exp"(%y) : (tensor<2x2xf32>) -> tensor<2x2xf32> loc("m.py":2:4)
  %u = "pyfront.update_slice"(%a, %v) {offsets = array<i64: 0, 2>, strides = array<i64: 1, 1>} : (tensor<2x8xf32>, tensor<2x2xf32>) -> tensor<2x8xf32>
  return %u : tensor<2x8xf32>
}

// -----

/// dynamic_update_slice (offsets computed at run time, the box in range) writes
/// all of its value too.

// CHECK-LABEL: func.func @dynamic_update_slice_keeps_its_value
// CHECK:         %[[V:[a-z0-9_]+]] = "pyfront.exp"(%{{.*}}) : (tensor<1x8xf32>)
// CHECK-NEXT:    %[[U:[a-z0-9_]+]] = "pyfront.dynamic_update_slice"(%{{.*}}, %[[V]], %{{.*}}, %{{.*}})
// CHECK-NOT:     "pyfront.reshape"(%[[V]])
// CHECK:         "pyfront.reshape"(%[[U]]) {shape = array<i64: 1, 32>}
// CHECK:         "pyfront.guard"({{.*}}) {kind = "fp-error", reason = "floating-point overflow in exp", site = "m.py:1:4"}
// CHECK-NOT:     "pyfront.guard"
func.func @dynamic_update_slice_keeps_its_value(%x: tensor<4x8xf32>, %y: tensor<1x8xf32>, %i: tensor<i64>, %j: tensor<i64>) -> tensor<4x8xf32> {
  %v = "pyfront.exp"(%y) : (tensor<1x8xf32>) -> tensor<1x8xf32> loc("m.py":1:4)
  %u = "pyfront.dynamic_update_slice"(%x, %v, %i, %j) {strides = array<i64: 1, 1>} : (tensor<4x8xf32>, tensor<1x8xf32>, tensor<i64>, tensor<i64>) -> tensor<4x8xf32>
  return %u : tensor<4x8xf32>
}
