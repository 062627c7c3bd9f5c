#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> ()>
#map2 = affine_map<() -> ()>
#map3 = affine_map<(d0) -> (d0)>
#map4 = affine_map<(d0) -> ()>
module {
  func.func @a6(%arg0: tensor<300x4xf64>, %arg1: tensor<300xi64>) -> (tensor<i64>, tensor<4xf64>, tensor<6xi8>) attributes {pyfront.guards = [["value", "/tmp/exp/ga3.py:7:0", "no subnormal float in arg0 (IREE's CPU code reads subnormals as zero)"], ["value", "/tmp/exp/ga3.py:11:12", "int64 scalar add does not overflow (NumPy warns)"], ["value", "/tmp/exp/ga3.py:11:12", "int64 scalar add does not overflow (NumPy warns)"], ["fp-error", "/tmp/exp/ga3.py:11:12", "floating-point overflow or invalid value in add"], ["fp-error", "/tmp/exp/ga3.py:12:12", "floating-point overflow or invalid value in add"], ["fp-error", "/tmp/exp/ga3.py:10:4", "floating-point overflow or invalid value in add inside the loop"]], pyfront.inputs = ["arg0", "arg1"], pyfront.outputs = ["return0", "return1", "guards"]} {
    %c127_i8 = arith.constant 127 : i8
    %cst = arith.constant 0x7FF8000000000000 : f64
    %c0_i8 = arith.constant 0 : i8
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %cst_0 = arith.constant 0x7FF0000000000000 : f64
    %cst_1 = arith.constant dense<true> : tensor<i1>
    %c300 = arith.constant 300 : index
    %c1 = arith.constant 1 : index
    %cst_2 = arith.constant dense<0.000000e+00> : tensor<4xf64>
    %cst_3 = arith.constant dense<4.6116860184273879E+18> : tensor<f64>
    %cst_4 = arith.constant dense<0.000000e+00> : tensor<f64>
    %cst_5 = arith.constant dense<0> : tensor<i64>
    %cst_6 = arith.constant 2.2250738585072014E-308 : f64
    %cst_7 = arith.constant 0.000000e+00 : f64
    %c1_i8 = arith.constant 1 : i8
    %0 = tensor.empty() : tensor<i8>
    %1 = linalg.fill ins(%c1_i8 : i8) outs(%0 : tensor<i8>) -> tensor<i8>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "reduction"]} ins(%arg0 : tensor<300x4xf64>) outs(%1 : tensor<i8>) {
    ^bb0(%in: f64, %out: i8):
      %24 = arith.cmpf oeq, %in, %cst_7 : f64
      %25 = math.absf %in : f64
      %26 = arith.cmpf uge, %25, %cst_6 : f64
      %27 = arith.ori %24, %26 : i1
      %28 = arith.extui %27 : i1 to i8
      %29 = arith.minsi %out, %28 : i8
      linalg.yield %29 : i8
    } -> tensor<i8>
    %3 = tensor.empty() : tensor<i1>
    %4 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%2 : tensor<i8>) outs(%3 : tensor<i1>) {
    ^bb0(%in: i8, %out: i1):
      %24 = arith.cmpi ne, %in, %c0_i8 : i8
      linalg.yield %24 : i1
    } -> tensor<i1>
    %extracted_slice = tensor.extract_slice %arg1[0] [1] [1] : tensor<300xi64> to tensor<1xi64>
    %collapsed = tensor.collapse_shape %extracted_slice [] : tensor<1xi64> into tensor<i64>
    %5 = tensor.empty() : tensor<i64>
    %6 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%cst_5, %collapsed : tensor<i64>, tensor<i64>) outs(%5 : tensor<i64>) {
    ^bb0(%in: i64, %in_10: i64, %out: i64):
      %24 = arith.addi %in, %in_10 : i64
      linalg.yield %24 : i64
    } -> tensor<i64>
    %7 = tensor.empty() : tensor<f64>
    %8 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%collapsed : tensor<i64>) outs(%7 : tensor<f64>) {
    ^bb0(%in: i64, %out: f64):
      %24 = arith.sitofp %in : i64 to f64
      linalg.yield %24 : f64
    } -> tensor<f64>
    %9 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%cst_4, %8 : tensor<f64>, tensor<f64>) outs(%7 : tensor<f64>) {
    ^bb0(%in: f64, %in_10: f64, %out: f64):
      %24 = arith.addf %in, %in_10 : f64
      %25 = arith.cmpf oeq, %24, %cst_7 : f64
      %26 = arith.negf %in_10 : f64
      %27 = arith.cmpf une, %in, %26 : f64
      %28 = arith.andi %25, %27 : i1
      %29 = arith.select %28, %cst, %24 : f64
      linalg.yield %29 : f64
    } -> tensor<f64>
    %10 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%9 : tensor<f64>) outs(%7 : tensor<f64>) {
    ^bb0(%in: f64, %out: f64):
      %24 = math.absf %in : f64
      linalg.yield %24 : f64
    } -> tensor<f64>
    %11 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%10, %cst_3 : tensor<f64>, tensor<f64>) outs(%3 : tensor<i1>) {
    ^bb0(%in: f64, %in_10: f64, %out: i1):
      %24 = arith.cmpf olt, %in, %in_10 : f64
      linalg.yield %24 : i1
    } -> tensor<i1>
    %extracted_slice_8 = tensor.extract_slice %arg0[0, 0] [1, 4] [1, 1] : tensor<300x4xf64> to tensor<1x4xf64>
    %collapsed_9 = tensor.collapse_shape %extracted_slice_8 [[0, 1]] : tensor<1x4xf64> into tensor<4xf64>
    %12 = tensor.empty() : tensor<4xf64>
    %13 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel"]} ins(%cst_2, %collapsed_9 : tensor<4xf64>, tensor<4xf64>) outs(%12 : tensor<4xf64>) {
    ^bb0(%in: f64, %in_10: f64, %out: f64):
      %24 = arith.addf %in, %in_10 : f64
      %25 = arith.cmpf oeq, %24, %cst_7 : f64
      %26 = arith.negf %in_10 : f64
      %27 = arith.cmpf une, %in, %26 : f64
      %28 = arith.andi %25, %27 : i1
      %29 = arith.select %28, %cst, %24 : f64
      linalg.yield %29 : f64
    } -> tensor<4xf64>
    %14:4 = scf.for %arg2 = %c1 to %c300 step %c1 iter_args(%arg3 = %6, %arg4 = %13, %arg5 = %cst_1, %arg6 = %cst_1) -> (tensor<i64>, tensor<4xf64>, tensor<i1>, tensor<i1>) {
      %extracted_slice_10 = tensor.extract_slice %arg1[%arg2] [1] [1] : tensor<300xi64> to tensor<1xi64>
      %collapsed_11 = tensor.collapse_shape %extracted_slice_10 [] : tensor<1xi64> into tensor<i64>
      %24 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%arg3, %collapsed_11 : tensor<i64>, tensor<i64>) outs(%5 : tensor<i64>) {
      ^bb0(%in: i64, %in_14: i64, %out: i64):
        %41 = arith.addi %in, %in_14 : i64
        linalg.yield %41 : i64
      } -> tensor<i64>
      %25 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%arg3 : tensor<i64>) outs(%7 : tensor<f64>) {
      ^bb0(%in: i64, %out: f64):
        %41 = arith.sitofp %in : i64 to f64
        linalg.yield %41 : f64
      } -> tensor<f64>
      %26 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%collapsed_11 : tensor<i64>) outs(%7 : tensor<f64>) {
      ^bb0(%in: i64, %out: f64):
        %41 = arith.sitofp %in : i64 to f64
        linalg.yield %41 : f64
      } -> tensor<f64>
      %27 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%25, %26 : tensor<f64>, tensor<f64>) outs(%7 : tensor<f64>) {
      ^bb0(%in: f64, %in_14: f64, %out: f64):
        %41 = arith.addf %in, %in_14 : f64
        %42 = arith.cmpf oeq, %41, %cst_7 : f64
        %43 = arith.negf %in_14 : f64
        %44 = arith.cmpf une, %in, %43 : f64
        %45 = arith.andi %42, %44 : i1
        %46 = arith.select %45, %cst, %41 : f64
        linalg.yield %46 : f64
      } -> tensor<f64>
      %28 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%27 : tensor<f64>) outs(%7 : tensor<f64>) {
      ^bb0(%in: f64, %out: f64):
        %41 = math.absf %in : f64
        linalg.yield %41 : f64
      } -> tensor<f64>
      %29 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%28, %cst_3 : tensor<f64>, tensor<f64>) outs(%3 : tensor<i1>) {
      ^bb0(%in: f64, %in_14: f64, %out: i1):
        %41 = arith.cmpf olt, %in, %in_14 : f64
        linalg.yield %41 : i1
      } -> tensor<i1>
      %extracted_slice_12 = tensor.extract_slice %arg0[%arg2, 0] [1, 4] [1, 1] : tensor<300x4xf64> to tensor<1x4xf64>
      %collapsed_13 = tensor.collapse_shape %extracted_slice_12 [[0, 1]] : tensor<1x4xf64> into tensor<4xf64>
      %30 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel"]} ins(%arg4, %collapsed_13 : tensor<4xf64>, tensor<4xf64>) outs(%12 : tensor<4xf64>) {
      ^bb0(%in: f64, %in_14: f64, %out: f64):
        %41 = arith.addf %in, %in_14 : f64
        %42 = arith.cmpf oeq, %41, %cst_7 : f64
        %43 = arith.negf %in_14 : f64
        %44 = arith.cmpf une, %in, %43 : f64
        %45 = arith.andi %42, %44 : i1
        %46 = arith.select %45, %cst, %41 : f64
        linalg.yield %46 : f64
      } -> tensor<4xf64>
      %31 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%arg5, %29 : tensor<i1>, tensor<i1>) outs(%3 : tensor<i1>) {
      ^bb0(%in: i1, %in_14: i1, %out: i1):
        %41 = arith.andi %in, %in_14 : i1
        linalg.yield %41 : i1
      } -> tensor<i1>
      %32 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%28 : tensor<f64>) outs(%0 : tensor<i8>) {
      ^bb0(%in: f64, %out: i8):
        %41 = math.absf %in : f64
        %42 = arith.cmpf olt, %41, %cst_0 : f64
        %43 = arith.extui %42 : i1 to i8
        linalg.yield %43 : i8
      } -> tensor<i8>
      %33 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%32 : tensor<i8>) outs(%3 : tensor<i1>) {
      ^bb0(%in: i8, %out: i1):
        %41 = arith.cmpi ne, %in, %c0_i8 : i8
        linalg.yield %41 : i1
      } -> tensor<i1>
      %34 = tensor.empty() : tensor<4xi8>
      %35 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel"]} ins(%30 : tensor<4xf64>) outs(%34 : tensor<4xi8>) {
      ^bb0(%in: f64, %out: i8):
        %41 = math.absf %in : f64
        %42 = arith.cmpf olt, %41, %cst_0 : f64
        %43 = arith.extui %42 : i1 to i8
        linalg.yield %43 : i8
      } -> tensor<4xi8>
      %36 = linalg.fill ins(%c127_i8 : i8) outs(%0 : tensor<i8>) -> tensor<i8>
      %37 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["reduction"]} ins(%35 : tensor<4xi8>) outs(%36 : tensor<i8>) {
      ^bb0(%in: i8, %out: i8):
        %41 = arith.minsi %in, %out : i8
        linalg.yield %41 : i8
      } -> tensor<i8>
      %38 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%37 : tensor<i8>) outs(%3 : tensor<i1>) {
      ^bb0(%in: i8, %out: i1):
        %41 = arith.cmpi ne, %in, %c0_i8 : i8
        linalg.yield %41 : i1
      } -> tensor<i1>
      %39 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%arg6, %33 : tensor<i1>, tensor<i1>) outs(%3 : tensor<i1>) {
      ^bb0(%in: i1, %in_14: i1, %out: i1):
        %41 = arith.andi %in, %in_14 : i1
        linalg.yield %41 : i1
      } -> tensor<i1>
      %40 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%39, %38 : tensor<i1>, tensor<i1>) outs(%3 : tensor<i1>) {
      ^bb0(%in: i1, %in_14: i1, %out: i1):
        %41 = arith.andi %in, %in_14 : i1
        linalg.yield %41 : i1
      } -> tensor<i1>
      scf.yield %24, %30, %31, %40 : tensor<i64>, tensor<4xf64>, tensor<i1>, tensor<i1>
    }
    %15 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%10, %9 : tensor<f64>, tensor<f64>) outs(%0 : tensor<i8>) {
    ^bb0(%in: f64, %in_10: f64, %out: i8):
      %24 = math.absf %in : f64
      %25 = arith.cmpf olt, %24, %cst_0 : f64
      %26 = math.absf %in_10 : f64
      %27 = arith.cmpf olt, %26, %cst_0 : f64
      %28 = arith.andi %25, %27 : i1
      %29 = arith.extui %28 : i1 to i8
      linalg.yield %29 : i8
    } -> tensor<i8>
    %16 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%15 : tensor<i8>) outs(%3 : tensor<i1>) {
    ^bb0(%in: i8, %out: i1):
      %24 = arith.cmpi ne, %in, %c0_i8 : i8
      linalg.yield %24 : i1
    } -> tensor<i1>
    %17 = tensor.empty() : tensor<4xi8>
    %18 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel"]} ins(%13 : tensor<4xf64>) outs(%17 : tensor<4xi8>) {
    ^bb0(%in: f64, %out: i8):
      %24 = math.absf %in : f64
      %25 = arith.cmpf olt, %24, %cst_0 : f64
      %26 = arith.extui %25 : i1 to i8
      linalg.yield %26 : i8
    } -> tensor<4xi8>
    %19 = linalg.fill ins(%c127_i8 : i8) outs(%0 : tensor<i8>) -> tensor<i8>
    %20 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["reduction"]} ins(%18 : tensor<4xi8>) outs(%19 : tensor<i8>) {
    ^bb0(%in: i8, %out: i8):
      %24 = arith.minsi %in, %out : i8
      linalg.yield %24 : i8
    } -> tensor<i8>
    %21 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%20 : tensor<i8>) outs(%3 : tensor<i1>) {
    ^bb0(%in: i8, %out: i1):
      %24 = arith.cmpi ne, %in, %c0_i8 : i8
      linalg.yield %24 : i1
    } -> tensor<i1>
    %22 = tensor.empty() : tensor<6xi8>
    %23 = linalg.generic {indexing_maps = [#map4, #map4, #map4, #map4, #map4, #map4, #map3], iterator_types = ["parallel"]} ins(%4, %11, %14#2, %16, %21, %14#3 : tensor<i1>, tensor<i1>, tensor<i1>, tensor<i1>, tensor<i1>, tensor<i1>) outs(%22 : tensor<6xi8>) {
    ^bb0(%in: i1, %in_10: i1, %in_11: i1, %in_12: i1, %in_13: i1, %in_14: i1, %out: i8):
      %24 = linalg.index 0 : index
      %25 = arith.extui %in : i1 to i8
      %26 = arith.extui %in_10 : i1 to i8
      %27 = arith.extui %in_11 : i1 to i8
      %28 = arith.extui %in_12 : i1 to i8
      %29 = arith.extui %in_13 : i1 to i8
      %30 = arith.extui %in_14 : i1 to i8
      %31 = arith.cmpi eq, %24, %c4 : index
      %32 = arith.select %31, %29, %30 : i8
      %33 = arith.cmpi eq, %24, %c3 : index
      %34 = arith.select %33, %28, %32 : i8
      %35 = arith.cmpi eq, %24, %c2 : index
      %36 = arith.select %35, %27, %34 : i8
      %37 = arith.cmpi eq, %24, %c1 : index
      %38 = arith.select %37, %26, %36 : i8
      %39 = arith.cmpi eq, %24, %c0 : index
      %40 = arith.select %39, %25, %38 : i8
      linalg.yield %40 : i8
    } -> tensor<6xi8>
    return %14#0, %14#1, %23 : tensor<i64>, tensor<4xf64>, tensor<6xi8>
  }
}
