// IREE 3.13 fails to compile this with --iree-dispatch-creation-data-tiling:
// "failed to legalize unresolved target materialization" of the i1 mask, which
// data tiling gives the matmul result's encoding. It compiles without the flag.
// From `np.where(mask, q @ k, -1e9)` (masked attention scores); README.md.
func.func @f(%q: tensor<2x10x8xf64>, %k: tensor<2x8x10xf64>, %mask: tensor<10x10xi1>) -> tensor<2x10x10xf64> {
  %zero = arith.constant 0.0 : f64
  %fill = arith.constant -1.0e9 : f64
  %empty = tensor.empty() : tensor<2x10x10xf64>
  %acc = linalg.fill ins(%zero : f64) outs(%empty : tensor<2x10x10xf64>) -> tensor<2x10x10xf64>
  %s = linalg.batch_matmul ins(%q, %k : tensor<2x10x8xf64>, tensor<2x8x10xf64>)
                           outs(%acc : tensor<2x10x10xf64>) -> tensor<2x10x10xf64>
  %r = linalg.generic {
      indexing_maps = [affine_map<(b, i, j) -> (i, j)>, affine_map<(b, i, j) -> (b, i, j)>,
                       affine_map<(b, i, j) -> (b, i, j)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mask, %s : tensor<10x10xi1>, tensor<2x10x10xf64>) outs(%empty : tensor<2x10x10xf64>) {
  ^bb0(%m: i1, %v: f64, %out: f64):
    %y = arith.select %m, %v, %fill : f64
    linalg.yield %y : f64
  } -> tensor<2x10x10xf64>
  return %r : tensor<2x10x10xf64>
}
