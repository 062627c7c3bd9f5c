#map = affine_map<(d0, d1) -> (d0, d1)>
#map5 = affine_map<(d0, d1) -> (d1)>
#map6 = affine_map<(d0, d1) -> (d0)>
func.func @f(%x: tensor<3x3xf32>, %idx: tensor<2xi64>) -> tensor<3x3xf32> {
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  %c0_i64 = arith.constant 0 : i64
  %cm1 = arith.constant -1 : i64
  %two = arith.constant 2.000000e+00 : f32
  %onehalf = arith.constant 1.500000e+00 : f32
  %e = tensor.empty() : tensor<3xi64>
  %fill = linalg.fill ins(%cm1 : i64) outs(%e : tensor<3xi64>) -> tensor<3xi64>
  %last = linalg.generic {indexing_maps = [#map5, #map6], iterator_types = ["parallel", "reduction"]} ins(%idx : tensor<2xi64>) outs(%fill : tensor<3xi64>) {
  ^bb0(%in: i64, %out: i64):
    %31 = linalg.index 1 : index
    %32 = arith.index_cast %31 : index to i64
    %33 = arith.maxsi %out, %32 : i64
    %34 = arith.index_cast %in : i64 to index
    %35 = arith.minsi %34, %c2 : index
    %36 = arith.maxsi %35, %c0 : index
    %37 = linalg.index 0 : index
    %38 = arith.cmpi eq, %36, %37 : index
    %39 = arith.select %38, %33, %out : i64
    linalg.yield %39 : i64
  } -> tensor<3xi64>
  %e2 = tensor.empty() : tensor<3x3xf32>
  %a = linalg.generic {indexing_maps = [#map, #map6, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %last : tensor<3x3xf32>, tensor<3xi64>) outs(%e2 : tensor<3x3xf32>) {
  ^bb0(%in: f32, %l: i64, %out: f32):
    %31 = arith.cmpi sge, %l, %c0_i64 : i64
    %32 = arith.select %31, %onehalf, %in : f32
    linalg.yield %32 : f32
  } -> tensor<3x3xf32>
  %b = linalg.generic {indexing_maps = [#map, #map5, #map], iterator_types = ["parallel", "parallel"]} ins(%a, %last : tensor<3x3xf32>, tensor<3xi64>) outs(%e2 : tensor<3x3xf32>) {
  ^bb0(%in: f32, %l: i64, %out: f32):
    %31 = arith.cmpi sge, %l, %c0_i64 : i64
    %32 = arith.select %31, %two, %in : f32
    linalg.yield %32 : f32
  } -> tensor<3x3xf32>
  return %b : tensor<3x3xf32>
}
