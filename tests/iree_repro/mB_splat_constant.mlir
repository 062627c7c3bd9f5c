// mB.mlir with the always-2 select replaced by an arith.constant splat (what pass materialize-splats
// gives IREE): IREE 3.13 returns result[0] = 2, right.
#map = affine_map<() -> ()>
module {
  func.func @f1(%arg0: tensor<i1>) -> (tensor<i64>, tensor<f64>, tensor<1xi8>) attributes {pyfront.guards = [["fp-error", "example.py:7:11", "floating-point overflow in exp"]], pyfront.inputs = ["arg0"], pyfront.outputs = ["return0", "return1", "store:arg1.value", "guards"]} {
    %c0_i8 = arith.constant 0 : i8
    %cst = arith.constant 0x7FF0000000000000 : f64
    %cst_0 = arith.constant dense<2> : tensor<i64>
    %cst_1 = arith.constant dense<-2.500000e-01> : tensor<f64>
    %0 = tensor.empty() : tensor<f64>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%arg0 : tensor<i1>) outs(%0 : tensor<f64>) {
    ^bb0(%in: i1, %out: f64):
      %13 = arith.uitofp %in : i1 to f64
      linalg.yield %13 : f64
    } -> tensor<f64>
    %2 = tensor.empty() : tensor<i1>
    %3 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%1, %cst_1 : tensor<f64>, tensor<f64>) outs(%2 : tensor<i1>) {
    ^bb0(%in: f64, %in_2: f64, %out: i1):
      %13 = arith.cmpf ogt, %in, %in_2 : f64
      linalg.yield %13 : i1
    } -> tensor<i1>
    %4 = tensor.empty() : tensor<i64>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%arg0 : tensor<i1>) outs(%4 : tensor<i64>) {
    ^bb0(%in: i1, %out: i64):
      %13 = arith.extui %in : i1 to i64
      linalg.yield %13 : i64
    } -> tensor<i64>
    %6 = arith.constant dense<2> : tensor<i64>
    %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%6 : tensor<i64>) outs(%0 : tensor<f64>) {
    ^bb0(%in: i64, %out: f64):
      %13 = arith.sitofp %in : i64 to f64
      linalg.yield %13 : f64
    } -> tensor<f64>
    %8 = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%7 : tensor<f64>) outs(%0 : tensor<f64>) {
    ^bb0(%in: f64, %out: f64):
      %13 = math.exp %in : f64
      linalg.yield %13 : f64
    } -> tensor<f64>
    %9 = tensor.empty() : tensor<i8>
    %10 = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%8 : tensor<f64>) outs(%9 : tensor<i8>) {
    ^bb0(%in: f64, %out: i8):
      %13 = math.absf %in : f64
      %14 = arith.cmpf olt, %13, %cst : f64
      %15 = arith.extui %14 : i1 to i8
      linalg.yield %15 : i8
    } -> tensor<i8>
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%10 : tensor<i8>) outs(%2 : tensor<i1>) {
    ^bb0(%in: i8, %out: i1):
      %13 = arith.cmpi ne, %in, %c0_i8 : i8
      linalg.yield %13 : i1
    } -> tensor<i1>
    %extracted = tensor.extract %11[] : tensor<i1>
    %12 = arith.extui %extracted : i1 to i8
    %from_elements = tensor.from_elements %12 : tensor<1xi8>
    return %6, %8, %from_elements : tensor<i64>, tensor<f64>, tensor<1xi8>
  }
}
