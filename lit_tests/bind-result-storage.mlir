// RUN: pyfront-opt %s --split-input-file --bind-result-storage | filecheck %s

/// A state result that replaces a state input of the same type gets a storage
/// argument after the others; IREE writes the result into it.

// CHECK-LABEL: func.func @sgd
// CHECK-SAME:    (%[[W:.*]]: tensor<4x8xf32>, %[[G:.*]]: tensor<4x8xf32>, %[[S:.*]]: !hal.buffer_view {iree.abi.output = 1 : index})
// CHECK-SAME:    pyfront.outputs = ["return0", "store:arg0.W"]
// CHECK-SAME:    pyfront.storage = {{\[}}[1 : index, 0 : index]]
// CHECK:         %[[NEW:.*]] = arith.subf %[[W]], %[[G]]
// CHECK:         return %{{.*}}, %[[NEW]]
func.func @sgd(%w: tensor<4x8xf32>, %g: tensor<4x8xf32>) -> (tensor<f32>, tensor<4x8xf32>)
    attributes {pyfront.inputs = ["arg0.W", "arg1"], pyfront.outputs = ["return0", "store:arg0.W"]} {
  %new = arith.subf %w, %g : tensor<4x8xf32>
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c, %new : tensor<f32>, tensor<4x8xf32>
}

// -----

/// A stored value that is also a plain result (the graph generator returns
/// stored arrays, to keep their identity) is returned once: the `store:`
/// result goes, `pyfront.stores` says which result it shares, and that
/// result gets the storage.

// CHECK-LABEL: func.func @returned_and_stored
// CHECK-SAME:    %{{.*}}: !hal.buffer_view {iree.abi.output = 0 : index}
// CHECK-SAME:    -> (tensor<4xf32>, tensor<f32>)
// CHECK-SAME:    pyfront.outputs = ["return0", "return1"]
// CHECK-SAME:    pyfront.storage = {{\[}}[0 : index, 0 : index]]
// CHECK-SAME:    pyfront.stores = {{\[}}["arg0.h", 0 : index]]
// CHECK:         return %[[H:.*]], %{{.*}} : tensor<4xf32>, tensor<f32>
// CHECK-NOT:     %[[H]], %[[H]]
func.func @returned_and_stored(%h: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>, tensor<4xf32>)
    attributes {pyfront.inputs = ["arg0.h", "arg1"], pyfront.outputs = ["return0", "return1", "store:arg0.h"]} {
  %new = arith.addf %h, %x : tensor<4xf32>
  %c = arith.constant dense<1.0> : tensor<f32>
  return %new, %c, %new : tensor<4xf32>, tensor<f32>, tensor<4xf32>
}

// -----

/// No storage where the runtime could not offer a displaced buffer or IREE
/// would have to copy: a path the call does not read, another type, a
/// dynamic shape, an argument passed through, a value returned twice more.

// CHECK-LABEL: func.func @not_bound
// CHECK-NOT:     !hal.buffer_view
// CHECK-NOT:     pyfront.storage
// CHECK-NOT:     pyfront.stores
func.func @not_bound(%a: tensor<4xf32>, %b: tensor<4xf32>, %d: tensor<?xf32>, %e: tensor<4xf32>, %f: tensor<4xf32>)
    -> (tensor<4xf64>, tensor<?xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
    attributes {pyfront.inputs = ["arg0.a", "arg0.b", "arg0.d", "arg0.e", "arg0.f"],
                pyfront.outputs = ["store:arg0.a", "store:arg0.d", "store:arg0.e", "store:arg0.g",
                                   "return0", "return1", "store:arg0.f"]} {
  %wide = arith.extf %a : tensor<4xf32> to tensor<4xf64>
  %dyn = arith.addf %d, %d : tensor<?xf32>
  %twice = arith.addf %f, %f : tensor<4xf32>
  return %wide, %dyn, %b, %a, %twice, %twice, %twice
    : tensor<4xf64>, tensor<?xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
