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

// -----

/// `global g; g = g + x; return g * g`: the write becomes the result
/// `store:global:g`, and the read after it sees the stored value, so
/// `global:g` is read once, as an argument.

// CHECK-LABEL: func.func @store_global_then_load
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[G:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-SAME:    pyfront.inputs = ["arg0", "global:g"]
// CHECK-SAME:    pyfront.outputs = ["return0", "store:global:g"]
// CHECK:         %[[NEW:.*]] = "pyfront.add"(%[[G]], %[[X]])
// CHECK-NOT:     pyfront.load_global
// CHECK-NOT:     pyfront.store_global
// CHECK:         %[[Y:.*]] = "pyfront.multiply"(%[[NEW]], %[[NEW]])
// CHECK:         return %[[Y]], %[[NEW]]
func.func @store_global_then_load(%x: tensor<4xf32>) -> tensor<4xf32> {
  %g = "pyfront.load_global"() {name = "g"} : () -> tensor<4xf32>
  %new = "pyfront.add"(%g, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "pyfront.store_global"(%new) {name = "g"} : (tensor<4xf32>) -> ()
  %g2 = "pyfront.load_global"() {name = "g"} : () -> tensor<4xf32>
  %y = "pyfront.multiply"(%g2, %g2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

/// `nonlocal c; c = x * x` without reading c first: no input for `cell:c`,
/// only the result `store:cell:c`; a later read of the cell is the stored value.

// CHECK-LABEL: func.func @store_cell_only
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-SAME:    pyfront.inputs = ["arg0"]
// CHECK-SAME:    pyfront.outputs = ["return0", "store:cell:c"]
// CHECK-NEXT:    %[[C:.*]] = "pyfront.multiply"(%[[X]], %[[X]])
// CHECK-NEXT:    return %[[C]], %[[C]]
func.func @store_cell_only(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = "pyfront.multiply"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "pyfront.store_cell"(%c) {name = "c"} : (tensor<4xf32>) -> ()
  %c2 = "pyfront.load_cell"() {name = "c"} : () -> tensor<4xf32>
  return %c2 : tensor<4xf32>
}

// -----

/// Dict items: `d['h']` is read once; `d['h'] = ...` and `d['out'] = ...`
/// become results in first-store order; the read of `d['h']` after its store
/// sees the stored value; the dict argument itself is dropped.

// CHECK-LABEL: func.func @store_item
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[H:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-SAME:    pyfront.inputs = ["arg1", "arg0['h']"]
// CHECK-SAME:    pyfront.outputs = ["return0", "store:arg0['h']", "store:arg0['out']"]
// CHECK-NOT:     !pyfront.object
// CHECK:         %[[NEW:.*]] = "pyfront.add"(%[[H]], %[[X]])
// CHECK:         %[[OUT:.*]] = "pyfront.tanh"(%[[NEW]])
// CHECK-NOT:     pyfront.store_item
// CHECK-NOT:     pyfront.load_item
// CHECK:         %[[Y:.*]] = "pyfront.multiply"(%[[NEW]], %[[OUT]])
// CHECK:         return %[[Y]], %[[NEW]], %[[OUT]]
func.func @store_item(%d: !pyfront.object, %x: tensor<4xf32>) -> tensor<4xf32> {
  %h = "pyfront.load_item"(%d) {key = "h"} : (!pyfront.object) -> tensor<4xf32>
  %new = "pyfront.add"(%h, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "pyfront.store_item"(%d, %new) {key = "h"} : (!pyfront.object, tensor<4xf32>) -> ()
  %out = "pyfront.tanh"(%new) : (tensor<4xf32>) -> tensor<4xf32>
  "pyfront.store_item"(%d, %out) {key = "out"} : (!pyfront.object, tensor<4xf32>) -> ()
  %h2 = "pyfront.load_item"(%d) {key = "h"} : (!pyfront.object) -> tensor<4xf32>
  %y = "pyfront.multiply"(%h2, %out) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

/// A later store to a path replaces an earlier one (one result per path,
/// holding the last value), and a global and a cell of one name are distinct paths.

// CHECK-LABEL: func.func @last_store_wins
// CHECK-SAME:    pyfront.outputs = ["return0", "store:global:v", "store:cell:v"]
// CHECK:         %[[A:.*]] = "pyfront.add"
// CHECK:         %[[B:.*]] = "pyfront.multiply"
// CHECK:         return %{{.*}}, %[[B]], %[[A]]
func.func @last_store_wins(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = "pyfront.add"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "pyfront.store_global"(%a) {name = "v"} : (tensor<4xf32>) -> ()
  "pyfront.store_cell"(%a) {name = "v"} : (tensor<4xf32>) -> ()
  %b = "pyfront.multiply"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "pyfront.store_global"(%b) {name = "v"} : (tensor<4xf32>) -> ()
  return %x : tensor<4xf32>
}

// -----

/// A random draw made on the host before the call becomes an argument with
/// path `draw:<index>`, one per draw even when two draw alike (each advances
/// the generator), after the inputs that state reads add before it.

// CHECK-LABEL: func.func @host_draws
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf64>, %[[W:.*]]: tensor<4xf64>, %[[D0:.*]]: tensor<4xf64>, %[[D1:.*]]: tensor<4xf64>)
// CHECK-SAME:    pyfront.inputs = ["arg1", "arg0.W", "draw:0", "draw:1"]
// CHECK-NOT:     pyfront.host_draw
// CHECK:         %[[A:.*]] = "pyfront.add"(%[[D0]], %[[D1]])
// CHECK:         "pyfront.multiply"(%[[A]], %[[W]])
func.func @host_draws(%self: !pyfront.object, %x: tensor<4xf64>) -> tensor<4xf64> {
  %w = "pyfront.load_attr"(%self) {name = "W"} : (!pyfront.object) -> tensor<4xf64>
  %d0 = "pyfront.host_draw"() {index = 0 : i64, draw = "np.random.rand"} : () -> tensor<4xf64>
  %d1 = "pyfront.host_draw"() {index = 1 : i64, draw = "np.random.rand"} : () -> tensor<4xf64>
  %a = "pyfront.add"(%d0, %d1) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %y = "pyfront.multiply"(%a, %w) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  return %y : tensor<4xf64>
}
