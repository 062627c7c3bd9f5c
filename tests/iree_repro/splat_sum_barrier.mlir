#map = affine_map<(d0) -> (d0)>
#map1 = affine_map<(d0) -> ()>
func.func @f(%arg0: tensor<5xi64>) -> tensor<i64> {
  %c0_i64 = arith.constant 0 : i64
  %4 = tensor.empty() : tensor<5xi64>
  %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%arg0 : tensor<5xi64>) outs(%4 : tensor<5xi64>) {
  ^bb0(%in: i64, %out: i64):
    %c2 = arith.constant 2 : i64
    linalg.yield %c2 : i64
  } -> tensor<5xi64>
  %b6 = util.optimization_barrier %6 : tensor<5xi64>
  %7 = tensor.empty() : tensor<i64>
  %8 = linalg.fill ins(%c0_i64 : i64) outs(%7 : tensor<i64>) -> tensor<i64>
  %9 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction"]} ins(%b6 : tensor<5xi64>) outs(%8 : tensor<i64>) {
  ^bb0(%in: i64, %out: i64):
    %10 = arith.addi %in, %out : i64
    linalg.yield %10 : i64
  } -> tensor<i64>
  return %9 : tensor<i64>
}
