// RUN: pyfront-opt %s --split-input-file --specialize | filecheck %s

/// Primitive ops on constants fold to the constant NumPy computes (float32
/// stays float32); ops whose results are unused disappear.

// CHECK-LABEL: func.func @fold_and_dead_code
// CHECK-NOT:     "pyfront.multiply"
// CHECK-NOT:     "pyfront.exp"
// CHECK:         %[[C:.*]] = arith.constant dense<[7.38905573, 54.5981483, 403.428772, 2980.95801]> : tensor<4xf32>
// CHECK:         %[[Y:.*]] = "pyfront.add"(%arg0, %[[C]])
// CHECK-NEXT:    return %[[Y]]
func.func @fold_and_dead_code(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %b = arith.constant dense<2.0> : tensor<4xf32>
  %m = "pyfront.multiply"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %e = "pyfront.exp"(%m) : (tensor<4xf32>) -> tensor<4xf32>
  %unused = "pyfront.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %y = "pyfront.add"(%x, %e) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

/// Integer folding keeps NumPy's wrap-around of int32 (no promotion).

// CHECK-LABEL: func.func @fold_int32
// CHECK:         arith.constant dense<-2147483648> : tensor<2xi32>
// CHECK-NOT:     "pyfront.add"
func.func @fold_int32() -> tensor<2xi32> {
  %a = arith.constant dense<2147483647> : tensor<2xi32>
  %b = arith.constant dense<1> : tensor<2xi32>
  %s = "pyfront.add"(%a, %b) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %s : tensor<2xi32>
}

// -----

/// An op with a non-constant operand is not folded.

// CHECK-LABEL: func.func @no_fold
// CHECK:         "pyfront.multiply"(%arg0, %{{.*}})
func.func @no_fold(%x: tensor<4xf32>) -> tensor<4xf32> {
  %b = arith.constant dense<2.0> : tensor<4xf32>
  %m = "pyfront.multiply"(%x, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

/// A guard on constant true goes; a guard implied by an earlier one goes
/// (the same condition, or a conjunction of conditions already guarded);
/// the first guard on each condition stays, and so does a guard on false.

// CHECK-LABEL: func.func @redundant_guards
// CHECK-NOT:     site = "m.py:1"
// CHECK:         "pyfront.guard"(%arg0) {{.*}}site = "m.py:2"
// CHECK:         "pyfront.guard"(%arg1) {{.*}}site = "m.py:3"
// CHECK-NOT:     site = "m.py:4"
// CHECK-NOT:     site = "m.py:5"
// CHECK:         "pyfront.guard"(%false) {{.*}}site = "m.py:6"
func.func @redundant_guards(%c: i1, %d: i1) {
  %t = arith.constant true
  %f = arith.constant false
  "pyfront.guard"(%t) {kind = "value", reason = "n == 3", site = "m.py:1"} : (i1) -> ()
  "pyfront.guard"(%c) {kind = "branch", reason = "c", site = "m.py:2"} : (i1) -> ()
  "pyfront.guard"(%d) {kind = "branch", reason = "d", site = "m.py:3"} : (i1) -> ()
  %cd = arith.andi %c, %d : i1
  "pyfront.guard"(%cd) {kind = "branch", reason = "c and d", site = "m.py:4"} : (i1) -> ()
  "pyfront.guard"(%c) {kind = "branch", reason = "c again", site = "m.py:5"} : (i1) -> ()
  "pyfront.guard"(%f) {kind = "value", reason = "never", site = "m.py:6"} : (i1) -> ()
  return
}

// -----

/// Guards on structurally equal conditions (same ops on the same arguments,
/// not yet CSE'd) are one guard.

// CHECK-LABEL: func.func @structural_duplicates
// CHECK-COUNT-1: "pyfront.guard"
// CHECK-NOT:     "pyfront.guard"
func.func @structural_duplicates(%x: tensor<4xf32>) {
  %s1 = "pyfront.sum"(%x) {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  %z1 = arith.constant dense<0.0> : tensor<f32>
  %g1 = "pyfront.greater"(%s1, %z1) : (tensor<f32>, tensor<f32>) -> tensor<i1>
  "pyfront.guard"(%g1) {kind = "branch", reason = "x.sum() > 0", site = "m.py:7"} : (tensor<i1>) -> ()
  %s2 = "pyfront.sum"(%x) {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  %z2 = arith.constant dense<0.0> : tensor<f32>
  %g2 = "pyfront.greater"(%s2, %z2) : (tensor<f32>, tensor<f32>) -> tensor<i1>
  "pyfront.guard"(%g2) {kind = "branch", reason = "x.sum() > 0", site = "m.py:8"} : (tensor<i1>) -> ()
  return
}
