// RUN: pyfront-opt %s --split-input-file --hoist-entry-guards | filecheck %s

/// A guard on the inputs' dynamic dims (as the front end emits for `x + h`
/// with relaxed shapes) leaves the graph for the host-side entry check, with
/// its kind, site and reason; the ops that computed it are gone. A guard on a
/// computed value stays in the graph.

// CHECK-LABEL: func.func @shape_guard
// CHECK-SAME:    pyfront.entry_guards = {{\[}}["shape", "m.py:3", "x + h: sizes that vary between calls agree", "[\22and\22, [\22eq\22, [\22dim\22, 0, 0], [\22dim\22, 1, 0]], [\22sge\22, [\22dim\22, 0, 0], [\22const\22, 4]]]"]]
// CHECK-NOT:     tensor.dim
// CHECK-NOT:     arith.cmpi
// CHECK-NOT:     site = "m.py:3"
// CHECK:         "pyfront.guard"(%arg2) {{.*}}site = "m.py:4"
// CHECK:         "pyfront.add"
func.func @shape_guard(%x: tensor<?x8xf32>, %h: tensor<?x8xf32>, %t: tensor<i1>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x8xf32>
  %d1 = tensor.dim %h, %c0 : tensor<?x8xf32>
  %eq = arith.cmpi eq, %d0, %d1 : index
  %c4 = arith.constant 4 : index
  %ge = arith.cmpi sge, %d0, %c4 : index
  %both = arith.andi %eq, %ge : i1
  "pyfront.guard"(%both) {kind = "shape", reason = "x + h: sizes that vary between calls agree", site = "m.py:3"} : (i1) -> ()
  "pyfront.guard"(%t) {kind = "branch", reason = "x.sum() > 0 was true", site = "m.py:4"} : (tensor<i1>) -> ()
  %y = "pyfront.add"(%x, %h) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

/// A condition that reads a dim of a computed tensor (not an input) stays in
/// the graph; so does an unsigned comparison (not in the host's language).

// CHECK-LABEL: func.func @not_inputs_only
// CHECK-NOT:     pyfront.entry_guards
// CHECK:         "pyfront.guard"{{.*}}site = "m.py:5"
// CHECK:         "pyfront.guard"{{.*}}site = "m.py:6"
func.func @not_inputs_only(%x: tensor<?x8xf32>) {
  %e = "pyfront.exp"(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %c0 = arith.constant 0 : index
  %d0 = tensor.dim %e, %c0 : tensor<?x8xf32>
  %c4 = arith.constant 4 : index
  %eq = arith.cmpi eq, %d0, %c4 : index
  "pyfront.guard"(%eq) {kind = "shape", reason = "computed", site = "m.py:5"} : (i1) -> ()
  %d1 = tensor.dim %x, %c0 : tensor<?x8xf32>
  %ult = arith.cmpi ult, %d1, %c4 : index
  "pyfront.guard"(%ult) {kind = "shape", reason = "unsigned", site = "m.py:6"} : (i1) -> ()
  return
}
