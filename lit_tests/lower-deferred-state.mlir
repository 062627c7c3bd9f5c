// RUN: pyfront-opt %s --split-input-file --lower-deferred-state | filecheck %s

/// Reading `self.W` becomes a new argument with path `arg0.W`; the object
/// argument itself is dropped and the remaining argument keeps its path.

// CHECK-LABEL: func.func @load_attr
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK-SAME:    pyfront.inputs = ["arg1", "arg0.W"]
// CHECK-NOT:     !pyfront.object
// CHECK-NOT:     pyfront.load_attr
// CHECK:         %[[Y:.*]] = "pyfront.add"(%[[X]], %[[W]])
// CHECK:         return %[[Y]]
func.func @load_attr(%self: !pyfront.object, %x: tensor<4xf32>) -> tensor<4xf32> {
  %w = "pyfront.load_attr"(%self) {name = "W"} : (!pyfront.object) -> tensor<4xf32>
  %y = "pyfront.add"(%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

/// Two reads of one path share one argument.

// CHECK-LABEL: func.func @load_twice
// CHECK-SAME:    (%[[W:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK-SAME:    pyfront.inputs = ["arg0.W"]
// CHECK:         "pyfront.multiply"(%[[W]], %[[W]])
func.func @load_twice(%self: !pyfront.object) -> tensor<4xf32> {
  %a = "pyfront.load_attr"(%self) {name = "W"} : (!pyfront.object) -> tensor<4xf32>
  %b = "pyfront.load_attr"(%self) {name = "W"} : (!pyfront.object) -> tensor<4xf32>
  %y = "pyfront.multiply"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

/// A store is deferred: it becomes a result with path `store:arg0.W`, and a
/// later read of the same path in this call sees the stored value, not an argument.

// CHECK-LABEL: func.func @store_then_load
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-SAME:    pyfront.inputs = ["arg1", "arg0.W"]
// CHECK-SAME:    pyfront.outputs = ["return0", "store:arg0.W"]
// CHECK:         %[[NEW:.*]] = "pyfront.add"(%[[X]], %[[W]])
// CHECK-NOT:     pyfront.store_attr
// CHECK:         %[[Y:.*]] = "pyfront.multiply"(%[[NEW]], %[[NEW]])
// CHECK:         return %[[Y]], %[[NEW]]
func.func @store_then_load(%self: !pyfront.object, %x: tensor<4xf32>) -> tensor<4xf32> {
  %w = "pyfront.load_attr"(%self) {name = "W"} : (!pyfront.object) -> tensor<4xf32>
  %new = "pyfront.add"(%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "pyfront.store_attr"(%self, %new) {name = "W"} : (!pyfront.object, tensor<4xf32>) -> ()
  %w2 = "pyfront.load_attr"(%self) {name = "W"} : (!pyfront.object) -> tensor<4xf32>
  %y = "pyfront.multiply"(%w2, %w2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

/// Object-valued loads extend the path (`arg0.m[0]`, `arg0.m['k']`); cells and
/// globals are roots of their own; only the last store to a path is returned.

// CHECK-LABEL: func.func @paths
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xf32>, %[[J:.*]]: tensor<4xf32>, %[[C:.*]]: tensor<i64>)
// CHECK-SAME:    -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-SAME:    pyfront.inputs = ["arg1", "arg0.m[0]", "arg0.m['k']", "cell:count"]
// CHECK-SAME:    pyfront.outputs = ["return0", "store:global:g"]
// CHECK-NEXT:    return %[[X]], %[[J]]
func.func @paths(%self: !pyfront.object, %x: tensor<4xf32>) -> tensor<4xf32> {
  %m = "pyfront.load_attr"(%self) {name = "m"} : (!pyfront.object) -> !pyfront.object
  %i = "pyfront.load_item"(%m) {key = 0 : i64} : (!pyfront.object) -> tensor<4xf32>
  %j = "pyfront.load_item"(%m) {key = "k"} : (!pyfront.object) -> tensor<4xf32>
  %c = "pyfront.load_cell"() {name = "count"} : () -> tensor<i64>
  "pyfront.store_global"(%i) {name = "g"} : (tensor<4xf32>) -> ()
  "pyfront.store_global"(%j) {name = "g"} : (tensor<4xf32>) -> ()
  return %x : tensor<4xf32>
}

// -----

/// A function without state keeps its arguments and results; only the input
/// paths are recorded.

// CHECK-LABEL: func.func @stateless
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK-SAME:    pyfront.inputs = ["arg0"]
// CHECK-NOT:     pyfront.outputs
// CHECK:         return %[[X]]
func.func @stateless(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
