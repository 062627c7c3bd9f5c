// RUN: pyfront-opt %s --lower-to-linalg --one-shot-bufferize | filecheck %s

/// After lowering, one-shot bufferization turns the function's tensors into
/// memrefs (across the function boundary): the elementwise op reads and
/// writes buffers, and no tensor remains.

// CHECK-LABEL: func.func @f
// CHECK-SAME:    (%{{.*}}: memref<4xf32{{.*}}>) -> memref<4xf32
// CHECK:         memref.alloc
// CHECK:         linalg.generic
// CHECK-SAME:    ins(%arg0 : memref<4xf32
// CHECK-SAME:    outs(%{{[a-z0-9_]+}} : memref<4xf32>)
// CHECK:         math.exp
// CHECK-NOT:     tensor<
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = "pyfront.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
