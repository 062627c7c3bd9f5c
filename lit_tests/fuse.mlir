// RUN: pyfront-opt %s --split-input-file --lower-to-linalg --fuse | filecheck %s

/// A chain of elementwise ops (bias add, then tanh) becomes one generic
/// computing both in its body.

// CHECK-LABEL: func.func @chain
// CHECK:         linalg.generic
// CHECK:           arith.addf
// CHECK:           math.tanh
// CHECK-NOT:     linalg.generic
func.func @chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %a = "pyfront.add"(%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %t = "pyfront.tanh"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}

// -----

/// A matmul is not elementwise: it stays its own op; the bias add and the
/// relu after it fuse into one consumer generic (IREE puts that consumer in
/// the matmul's dispatch).

// CHECK-LABEL: func.func @dense_relu
// CHECK:         linalg.matmul
// CHECK:         linalg.generic
// CHECK:           arith.addf
// CHECK:           arith.select
// CHECK-NOT:     linalg.generic
func.func @dense_relu(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %m = "pyfront.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %a = "pyfront.add"(%m, %b) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %z = arith.constant dense<0.0> : tensor<4x3xf32>
  %r = "pyfront.maximum"(%a, %z) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
