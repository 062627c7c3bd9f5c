// RUN: not pyfront-opt %s --split-input-file 2>&1 | filecheck %s

/// A primitive whose result shape disagrees with the shape rule is rejected at
/// the op's line and column.

// CHECK: verifier.mlir:[[# @LINE + 2]]:8: error: result type should be tensor<4x8xf32>, got tensor<4xf32>
func.func @bad_shape(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4xf32> {
  %0 = "pyfront.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

/// A result dtype that disagrees with the dtype rule is rejected.

// CHECK: verifier.mlir:[[# @LINE + 2]]:8: error: result type should be tensor<4xi1>, got tensor<4xf32>
func.func @bad_dtype(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "pyfront.less"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

/// Operands must already share one dtype (the front end inserts astype).

// CHECK: verifier.mlir:[[# @LINE + 2]]:8: error: multiply: operand dtypes differ: float32, int32
func.func @mixed_dtypes(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xf32> {
  %0 = "pyfront.multiply"(%a, %b) : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

/// A dtype NumPy has no loop for is rejected.

// CHECK: verifier.mlir:[[# @LINE + 2]]:8: error: sin: no loop for dtype int32
func.func @no_loop(%a: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "pyfront.sin"(%a) : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

/// Operand shapes that do not broadcast are rejected.

// CHECK: verifier.mlir:[[# @LINE + 2]]:8: error: shape mismatch
func.func @no_broadcast(%a: tensor<3xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "pyfront.add"(%a, %b) : (tensor<3xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

/// Required attributes must be present and of the declared kind.

// CHECK: verifier.mlir:[[# @LINE + 3]]:8: error: 'pyfront.sum' requires attribute 'axes'
// CHECK: verifier.mlir:[[# @LINE + 3]]:8: error: 'pyfront.sum' attribute 'axes' must be of kind i64s
func.func @attributes(%a: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3xf32>) {
  %0 = "pyfront.sum"(%a) {keepdims = false} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %1 = "pyfront.sum"(%a) {axes = 1 : i64, keepdims = false} : (tensor<3x4xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<3x4xf32>, tensor<3xf32>
}

// -----

/// Reduction axes must be in range.

// CHECK: verifier.mlir:[[# @LINE + 2]]:8: error: axes (2,) out of range for rank 2
func.func @bad_axes(%a: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = "pyfront.max"(%a) {axes = array<i64: 2>, keepdims = false} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

/// The operand count is checked.

// CHECK: verifier.mlir:[[# @LINE + 2]]:8: error: 'pyfront.add' expects 2 operands, got 1
func.func @operand_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "pyfront.add"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

/// An op of the pyfront namespace that is not defined is rejected.

// CHECK: verifier.mlir:[[# @LINE + 2]]:8: error: unknown op 'pyfront.frobnicate'
func.func @unknown(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "pyfront.frobnicate"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

/// Guards need an i1 (or tensor<i1>) condition and a known kind.

// CHECK: verifier.mlir:[[# @LINE + 3]]:3: error: guard condition must be i1 or tensor<i1>
// CHECK: verifier.mlir:[[# @LINE + 3]]:3: error: guard kind must be one of branch,
func.func @guards(%a: tensor<4xf32>, %c: i1) {
  "pyfront.guard"(%a) {kind = "branch", reason = "r", site = "m.py:1"} : (tensor<4xf32>) -> ()
  "pyfront.guard"(%c) {kind = "hunch", reason = "r", site = "m.py:2"} : (i1) -> ()
  return
}

// -----

/// State ops read through a !pyfront.object, not a tensor.

// CHECK: verifier.mlir:[[# @LINE + 2]]:8: error: operand 'object' must be !pyfront.object
func.func @state_on_tensor(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "pyfront.load_attr"(%a) {name = "W"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

/// An op that carries the user's Python location is reported there.

// CHECK: model.py:12:5: error: result type should be tensor<4xf32>, got tensor<4xf64>
func.func @python_location(%a: tensor<4xf32>) -> tensor<4xf64> {
  %0 = "pyfront.exp"(%a) : (tensor<4xf32>) -> tensor<4xf64> loc("model.py":12:5)
  return %0 : tensor<4xf64>
}

// -----

/// MLIR's own parse errors keep their file, line and column.

// CHECK: verifier.mlir:[[# @LINE + 2]]:10: error: use of undeclared SSA value name
func.func @parse_error(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %undefined : tensor<4xf32>
}

// -----

/// A valid chunk after failing ones is still processed and printed; its output
/// follows all diagnostics and contains none.

// CHECK-NOT: error:
// CHECK-LABEL: func.func @valid
// CHECK: "pyfront.add"
func.func @valid(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "pyfront.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
