// RUN: pyfront-opt %s --split-input-file --lower-guards | filecheck %s

/// Guards on an i1 and on a tensor<i1> become one tensor<2xi8> result of 0/1
/// flags, in program order, gathered by one linalg.generic from 0-d tensors
/// (no scalar extracted: IREE would read each back to the host mid-call);
/// each guard's kind, site and reason move to `pyfront.guards`.

// CHECK-LABEL: func.func @two_guards
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[C:.*]]: i1, %[[T:.*]]: tensor<i1>) -> (tensor<4xf32>, tensor<2xi8>)
// CHECK-SAME:    pyfront.guards = {{\[}}["branch", "m.py:3", "x > 0 was true"], ["shape", "m.py:4", "y.shape[0] == 4"]]
// CHECK-SAME:    pyfront.outputs = ["return0", "guards"]
// CHECK-NOT:     pyfront.guard"
// CHECK-NOT:     tensor.extract
// CHECK:         %[[Y:.*]] = "pyfront.exp"(%[[X]])
// CHECK:         %[[C8:.*]] = arith.extui %[[C]] : i1 to i8
// CHECK:         %[[CT:.*]] = tensor.from_elements %[[C8]] : tensor<i8>
// CHECK:         %[[FLAGS:.*]] = linalg.generic {{.*}} ins(%[[CT]], %[[T]] : tensor<i8>, tensor<i1>) outs(%{{.*}} : tensor<2xi8>)
// CHECK:           %[[K:.*]] = linalg.index 0
// CHECK:           %[[T8:.*]] = arith.extui %{{.*}} : i1 to i8
// CHECK:           %[[FIRST:.*]] = arith.cmpi eq, %[[K]], %c0
// CHECK:           arith.select %[[FIRST]], %{{.*}}, %[[T8]] : i8
// CHECK:         return %[[Y]], %[[FLAGS]] : tensor<4xf32>, tensor<2xi8>
func.func @two_guards(%x: tensor<4xf32>, %c: i1, %t: tensor<i1>) -> tensor<4xf32> {
  "pyfront.guard"(%c) {kind = "branch", reason = "x > 0 was true", site = "m.py:3"} : (i1) -> ()
  %y = "pyfront.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  "pyfront.guard"(%t) {kind = "shape", reason = "y.shape[0] == 4", site = "m.py:4"} : (tensor<i1>) -> ()
  return %y : tensor<4xf32>
}

// -----

/// The flags come after the existing results, and "guards" after their paths.

// CHECK-LABEL: func.func @existing_outputs
// CHECK-SAME:    -> (tensor<4xf32>, tensor<4xf32>, tensor<1xi8>)
// CHECK-SAME:    pyfront.outputs = ["return0", "store:arg0.W", "guards"]
// CHECK:         %[[FLAGS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1xi8>)
// CHECK:         return %{{.*}}, %{{.*}}, %[[FLAGS]]
func.func @existing_outputs(%x: tensor<4xf32>, %c: i1) -> (tensor<4xf32>, tensor<4xf32>)
    attributes {pyfront.outputs = ["return0", "store:arg0.W"]} {
  "pyfront.guard"(%c) {kind = "value", reason = "n == 3", site = "m.py:9"} : (i1) -> ()
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}

// -----

/// A function without guards keeps its signature and gets no attributes.

// CHECK-LABEL: func.func @no_guards
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NOT:     linalg.generic
// CHECK-NEXT:    return %[[X]] : tensor<4xf32>
func.func @no_guards(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
