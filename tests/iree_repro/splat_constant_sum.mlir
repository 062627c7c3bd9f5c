// splat_sum.mlir with the constant as an arith.constant splat tensor (what pass materialize-splats
// gives IREE): IREE 3.13 computes it right, 10.
func.func @f(%arg0: tensor<5xi64>) -> tensor<i64> {
  %c0_i64 = arith.constant 0 : i64
  %6 = arith.constant dense<2> : tensor<5xi64>
  %7 = tensor.empty() : tensor<i64>
  %8 = linalg.fill ins(%c0_i64 : i64) outs(%7 : tensor<i64>) -> tensor<i64>
  %9 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%6 : tensor<5xi64>) outs(%8 : tensor<i64>) {
  ^bb0(%in: i64, %out: i64):
    %10 = arith.addi %in, %out : i64
    linalg.yield %10 : i64
  } -> tensor<i64>
  return %9 : tensor<i64>
}
