// IREE 3.13: a function argument that is both the destination of a
// tensor.insert_slice and returned unchanged comes back with the insert applied
// (expected: @f(0 0 0) returns 1 0 1 and 0 0 0; IREE returns 1 0 1 twice).
// NumPy: `v = a.copy(); a[::2] = 1; return v` (pyfront returns the argument
// for `v`). Any element type; a dispatch that also reads %arg0 hides it.
func.func @f(%arg0: tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi32>) {
  %cst = arith.constant dense<1> : tensor<2xi32>
  %inserted = tensor.insert_slice %cst into %arg0[0] [2] [2] : tensor<2xi32> into tensor<3xi32>
  return %inserted, %arg0 : tensor<3xi32>, tensor<3xi32>
}
