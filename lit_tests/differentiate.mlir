// RUN: not pyfront-opt %s --split-input-file --differentiate 2>/dev/null | filecheck %s
// RUN: not pyfront-opt %s --split-input-file --differentiate 2>&1 | filecheck %s --check-prefix=ERR
//
// (`not`: the third case fails on purpose; the others still print.)

/// A one-layer loss differentiated with respect to %w only: the forward is
/// copied, the backward follows it, and the cotangent of the constant input
/// %x (x's `ct @ w^T`) is never built.

// CHECK-LABEL: func.func @loss(
// CHECK-LABEL: func.func private @loss_grad
// CHECK-SAME:    (%[[W:.*]]: tensor<3x2xf32>, %[[X:.*]]: tensor<4x3xf32>) -> (tensor<f32>, tensor<3x2xf32>)
// CHECK:         %[[H:.*]] = "pyfront.matmul"(%[[X]], %[[W]])
// CHECK:         %[[T:.*]] = "pyfront.tanh"(%[[H]])
// CHECK:         %[[L:.*]] = "pyfront.sum"(%[[T]])
// CHECK-NOT:     "pyfront.transpose"(%[[W]])
// CHECK:         %[[XT:.*]] = "pyfront.transpose"(%[[X]]) {perm = array<i64: 1, 0>}
// CHECK-NEXT:    %[[GW:.*]] = "pyfront.matmul"(%[[XT]], %{{.*}}) : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    return %[[L]], %[[GW]] : tensor<f32>, tensor<3x2xf32>
func.func @loss(%w: tensor<3x2xf32>, %x: tensor<4x3xf32>) -> tensor<f32> {
  %h = "pyfront.matmul"(%x, %w) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %t = "pyfront.tanh"(%h) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %s = "pyfront.sum"(%t) {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func private @loss_grad(tensor<3x2xf32>, tensor<4x3xf32>) -> (tensor<f32>, tensor<3x2xf32>)
  attributes {pyfront.grad_of = @loss, pyfront.argnums = array<i64: 0>}

// -----

/// Fan-out: %x is used twice by one multiply, so its two cotangents are added.
/// An argument the loss does not use gets zeros. The comparison that feeds
/// `where`'s condition has a bool result: it is not differentiated.

// CHECK-LABEL: func.func private @square_grad
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>)
// CHECK:         %[[SQ:.*]] = "pyfront.multiply"(%[[X]], %[[X]])
// CHECK:         %[[R:.*]] = "pyfront.where"
// CHECK:         %[[L:.*]] = "pyfront.sum"(%[[R]])
// CHECK-NOT:     "pyfront.greater"
// CHECK:         %[[A:.*]] = "pyfront.multiply"(%{{.*}}, %[[X]])
// CHECK:         %[[B:.*]] = "pyfront.multiply"(%{{.*}}, %[[X]])
// CHECK:         %[[GX:.*]] = "pyfront.add"(%[[A]], %[[B]])
// CHECK:         %[[GY:.*]] = arith.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK:         return %[[L]], %[[GX]], %[[GY]] : tensor<f32>, tensor<4xf32>, tensor<4xf32>
func.func @square(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<f32> {
  %sq = "pyfront.multiply"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %pos = "pyfront.greater"(%x, %zero) : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
  %r = "pyfront.where"(%pos, %sq, %zero) : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %s = "pyfront.sum"(%r) {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func private @square_grad(tensor<4xf32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>)
  attributes {pyfront.grad_of = @square, pyfront.argnums = array<i64: 0, 1>}

// -----

/// Control flow on the differentiated path is refused with the user's line
/// (the front end then runs the call in the interpreter).

// ERR: m.py:7: gradient: scf.if (control flow on computed values) is on the differentiated path
// CHECK-NOT: func.func private @branchy_grad
func.func @branchy(%c: i1, %x: tensor<4xf32>) -> tensor<f32> {
  %r = scf.if %c -> (tensor<4xf32>) {
    %t = "pyfront.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %t : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  } loc("m.py":7:4)
  %s = "pyfront.sum"(%r) {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func private @branchy_grad(i1, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  attributes {pyfront.grad_of = @branchy, pyfront.argnums = array<i64: 1>}

// -----

/// A branch that does not touch the differentiated value (here: on a
/// constant input) is a constant of the differentiation and stays.

// CHECK-LABEL: func.func private @scale_grad
// CHECK:         %[[F:.*]] = scf.if
// CHECK:         "pyfront.sum"
// CHECK:         %[[G:.*]] = "pyfront.multiply"(%{{.*}}, %[[F]])
// CHECK-NEXT:    return %{{.*}}, %[[G]]
func.func @scale(%c: i1, %k: tensor<f32>, %x: tensor<4xf32>) -> tensor<f32> {
  %f = scf.if %c -> (tensor<f32>) {
    %e = "pyfront.exp"(%k) : (tensor<f32>) -> tensor<f32>
    scf.yield %e : tensor<f32>
  } else {
    scf.yield %k : tensor<f32>
  }
  %y = "pyfront.multiply"(%x, %f) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %s = "pyfront.sum"(%y) {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func private @scale_grad(i1, tensor<f32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  attributes {pyfront.grad_of = @scale, pyfront.argnums = array<i64: 2>}
