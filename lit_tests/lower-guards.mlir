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


// -----

/// 17 guards: each linalg.generic gathers at most 16 conditions (each one of
/// its dispatch's inputs: IREE 3.13's runtime binds at most 32), and
/// tensor.concat joins the groups in program order.

// CHECK-LABEL: func.func @seventeen_guards
// CHECK:         %[[FIRST:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<16xi8>)
// CHECK:         %[[LAST:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<i1>) outs(%{{.*}} : tensor<1xi8>)
// CHECK:         %[[FLAGS:.*]] = tensor.concat dim(0) %[[FIRST]], %[[LAST]] : (tensor<16xi8>, tensor<1xi8>) -> tensor<17xi8>
// CHECK:         return %[[FLAGS]] : tensor<17xi8>
func.func @seventeen_guards(%c0: tensor<i1>, %c1: tensor<i1>, %c2: tensor<i1>, %c3: tensor<i1>, %c4: tensor<i1>, %c5: tensor<i1>, %c6: tensor<i1>, %c7: tensor<i1>, %c8: tensor<i1>, %c9: tensor<i1>, %c10: tensor<i1>, %c11: tensor<i1>, %c12: tensor<i1>, %c13: tensor<i1>, %c14: tensor<i1>, %c15: tensor<i1>, %c16: tensor<i1>) {
  "pyfront.guard"(%c0) {kind = "value", reason = "c0", site = "m.py:1"} : (tensor<i1>) -> ()
  "pyfront.guard"(%c1) {kind = "value", reason = "c1", site = "m.py:2"} : (tensor<i1>) -> ()
  "pyfront.guard"(%c2) {kind = "value", reason = "c2", site = "m.py:3"} : (tensor<i1>) -> ()
  "pyfront.guard"(%c3) {kind = "value", reason = "c3", site = "m.py:4"} : (tensor<i1>) -> ()
  "pyfront.guard"(%c4) {kind = "value", reason = "c4", site = "m.py:5"} : (tensor<i1>) -> ()
  "pyfront.guard"(%c5) {kind = "value", reason = "c5", site = "m.py:6"} : (tensor<i1>) -> ()
  "pyfront.guard"(%c6) {kind = "value", reason = "c6", site = "m.py:7"} : (tensor<i1>) -> ()
  "pyfront.guard"(%c7) {kind = "value", reason = "c7", site = "m.py:8"} : (tensor<i1>) -> ()
  "pyfront.guard"(%c8) {kind = "value", reason = "c8", site = "m.py:9"} : (tensor<i1>) -> ()
  "pyfront.guard"(%c9) {kind = "value", reason = "c9", site = "m.py:10"} : (tensor<i1>) -> ()
  "pyfront.guard"(%c10) {kind = "value", reason = "c10", site = "m.py:11"} : (tensor<i1>) -> ()
  "pyfront.guard"(%c11) {kind = "value", reason = "c11", site = "m.py:12"} : (tensor<i1>) -> ()
  "pyfront.guard"(%c12) {kind = "value", reason = "c12", site = "m.py:13"} : (tensor<i1>) -> ()
  "pyfront.guard"(%c13) {kind = "value", reason = "c13", site = "m.py:14"} : (tensor<i1>) -> ()
  "pyfront.guard"(%c14) {kind = "value", reason = "c14", site = "m.py:15"} : (tensor<i1>) -> ()
  "pyfront.guard"(%c15) {kind = "value", reason = "c15", site = "m.py:16"} : (tensor<i1>) -> ()
  "pyfront.guard"(%c16) {kind = "value", reason = "c16", site = "m.py:17"} : (tensor<i1>) -> ()
  return
}

// -----

/// A condition that is a 0-d integer tensor cast to bool (the checks of
/// guard-fp-events and guard-subnormal-inputs) is gathered as the integer,
/// nonzero meaning held (IREE 3.13 gives each 0-d cast a dispatch); an i32
/// is compared with 0 in the gather, and a cast of a float is kept.

// CHECK-LABEL: func.func @cast_conditions
// CHECK-SAME:    (%[[B:.*]]: tensor<i8>, %[[W:.*]]: tensor<i32>, %[[F:.*]]: tensor<f32>)
// CHECK-NOT:     "pyfront.astype"(%[[B]])
// CHECK-NOT:     "pyfront.astype"(%[[W]])
// CHECK:         %[[FB:.*]] = "pyfront.astype"(%[[F]]) {dtype = "bool"}
// CHECK:         linalg.generic {{.*}} ins(%[[B]], %[[W]], %[[FB]] : tensor<i8>, tensor<i32>, tensor<i1>)
// CHECK:           %[[NZ:.*]] = arith.cmpi ne, %{{.*}}, %c0_i32 : i32
// CHECK:           arith.extui %[[NZ]] : i1 to i8
func.func @cast_conditions(%b: tensor<i8>, %w: tensor<i32>, %f: tensor<f32>) {
  %bb = "pyfront.astype"(%b) {dtype = "bool"} : (tensor<i8>) -> tensor<i1>
  "pyfront.guard"(%bb) {kind = "value", reason = "b", site = "m.py:1"} : (tensor<i1>) -> ()
  %wb = "pyfront.astype"(%w) {dtype = "bool"} : (tensor<i32>) -> tensor<i1>
  "pyfront.guard"(%wb) {kind = "value", reason = "w", site = "m.py:2"} : (tensor<i1>) -> ()
  %fb = "pyfront.astype"(%f) {dtype = "bool"} : (tensor<f32>) -> tensor<i1>
  "pyfront.guard"(%fb) {kind = "value", reason = "f", site = "m.py:3"} : (tensor<i1>) -> ()
  return
}
