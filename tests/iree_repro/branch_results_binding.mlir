#map = affine_map<() -> ()>
#map1 = affine_map<(d0) -> ()>
#map2 = affine_map<(d0) -> (d0)>
module {
  func.func @f(%arg0: tensor<2x3xf64>, %arg1: tensor<2xi64>) -> tensor<8xi8> {
    %cst = arith.constant 0x7FF8000000000000 : f64
    %c0_i8 = arith.constant 0 : i8
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %c6 = arith.constant 6 : index
    %cst_0 = arith.constant dense<2> : tensor<i64>
    %cst_1 = arith.constant dense<1> : tensor<i64>
    %cst_2 = arith.constant 0x7FF0000000000000 : f64
    %cst_3 = arith.constant dense<1.000000e+00> : tensor<f64>
    %cst_4 = arith.constant dense<3> : tensor<i64>
    %cst_5 = arith.constant dense<-3> : tensor<i64>
    %cst_6 = arith.constant dense<true> : tensor<i1>
    %cst_7 = arith.constant dense<false> : tensor<i1>
    %cst_8 = arith.constant dense<0.000000e+00> : tensor<f64>
    %cst_9 = arith.constant dense<0> : tensor<i64>
    %cst_10 = arith.constant 0.000000e+00 : f64
    %0 = tensor.empty() : tensor<i8>
    %1 = tensor.empty() : tensor<i1>
    %extracted_slice = tensor.extract_slice %arg1[0] [1] [1] : tensor<2xi64> to tensor<1xi64>
    %collapsed = tensor.collapse_shape %extracted_slice [] : tensor<1xi64> into tensor<i64>
    %2 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%cst_9, %collapsed : tensor<i64>, tensor<i64>) outs(%1 : tensor<i1>) {
    ^bb0(%in: i64, %in_13: i64, %out: i1):
      %10 = arith.cmpi ne, %in, %in_13 : i64
      linalg.yield %10 : i1
    } -> tensor<i1>
    %extracted = tensor.extract %2[] : tensor<i1>
    %3:3 = scf.if %extracted -> (tensor<f64>, tensor<i1>, tensor<i1>) {
      %extracted_slice_13 = tensor.extract_slice %arg0[0, 0] [1, 1] [1, 1] : tensor<2x3xf64> to tensor<1x1xf64>
      %collapsed_14 = tensor.collapse_shape %extracted_slice_13 [] : tensor<1x1xf64> into tensor<f64>
      %10 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%collapsed, %cst_5 : tensor<i64>, tensor<i64>) outs(%1 : tensor<i1>) {
      ^bb0(%in: i64, %in_19: i64, %out: i1):
        %26 = arith.cmpi sge, %in, %in_19 : i64
        linalg.yield %26 : i1
      } -> tensor<i1>
      %11 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%collapsed, %cst_4 : tensor<i64>, tensor<i64>) outs(%1 : tensor<i1>) {
      ^bb0(%in: i64, %in_19: i64, %out: i1):
        %26 = arith.cmpi slt, %in, %in_19 : i64
        linalg.yield %26 : i1
      } -> tensor<i1>
      %12 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%10, %11 : tensor<i1>, tensor<i1>) outs(%1 : tensor<i1>) {
      ^bb0(%in: i1, %in_19: i1, %out: i1):
        %26 = arith.andi %in, %in_19 : i1
        linalg.yield %26 : i1
      } -> tensor<i1>
      %13 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%collapsed, %cst_9 : tensor<i64>, tensor<i64>) outs(%1 : tensor<i1>) {
      ^bb0(%in: i64, %in_19: i64, %out: i1):
        %26 = arith.cmpi slt, %in, %in_19 : i64
        linalg.yield %26 : i1
      } -> tensor<i1>
      %14 = tensor.empty() : tensor<i64>
      %15 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%collapsed, %cst_4 : tensor<i64>, tensor<i64>) outs(%14 : tensor<i64>) {
      ^bb0(%in: i64, %in_19: i64, %out: i64):
        %26 = arith.addi %in, %in_19 : i64
        linalg.yield %26 : i64
      } -> tensor<i64>
      %16 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = []} ins(%13, %15, %collapsed : tensor<i1>, tensor<i64>, tensor<i64>) outs(%14 : tensor<i64>) {
      ^bb0(%in: i1, %in_19: i64, %in_20: i64, %out: i64):
        %26 = arith.select %in, %in_19, %in_20 : i64
        linalg.yield %26 : i64
      } -> tensor<i64>
      %extracted_15 = tensor.extract %16[] : tensor<i64>
      %17 = arith.index_cast %extracted_15 : i64 to index
      %18 = arith.minsi %17, %c2 : index
      %19 = arith.maxsi %18, %c0 : index
      %extracted_slice_16 = tensor.extract_slice %arg0[0, %19] [1, 1] [1, 1] : tensor<2x3xf64> to tensor<1x1xf64>
      %collapsed_17 = tensor.collapse_shape %extracted_slice_16 [] : tensor<1x1xf64> into tensor<f64>
      %20 = tensor.empty() : tensor<f64>
      %21 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%collapsed_14, %collapsed_17 : tensor<f64>, tensor<f64>) outs(%20 : tensor<f64>) {
      ^bb0(%in: f64, %in_19: f64, %out: f64):
        %26 = arith.subf %in, %in_19 : f64
        %27 = arith.cmpf oeq, %26, %cst_10 : f64
        %28 = arith.cmpf une, %in, %in_19 : f64
        %29 = arith.andi %27, %28 : i1
        %30 = arith.select %29, %cst, %26 : f64
        linalg.yield %30 : f64
      } -> tensor<f64>
      %22 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%21, %cst_3 : tensor<f64>, tensor<f64>) outs(%20 : tensor<f64>) {
      ^bb0(%in: f64, %in_19: f64, %out: f64):
        %26 = arith.addf %in, %in_19 : f64
        %27 = arith.cmpf oeq, %26, %cst_10 : f64
        %28 = arith.negf %in_19 : f64
        %29 = arith.cmpf une, %in, %28 : f64
        %30 = arith.andi %27, %29 : i1
        %31 = arith.select %30, %cst, %26 : f64
        linalg.yield %31 : f64
      } -> tensor<f64>
      %23 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%22, %cst_8 : tensor<f64>, tensor<f64>) outs(%1 : tensor<i1>) {
      ^bb0(%in: f64, %in_19: f64, %out: i1):
        %26 = arith.cmpf ogt, %in, %in_19 : f64
        linalg.yield %26 : i1
      } -> tensor<i1>
      %extracted_18 = tensor.extract %23[] : tensor<i1>
      %24 = arith.select %extracted_18, %cst_6, %cst_7 : tensor<i1>
      %25 = scf.if %extracted_18 -> (tensor<f64>) {
        %26 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%cst_8, %22 : tensor<f64>, tensor<f64>) outs(%20 : tensor<f64>) {
        ^bb0(%in: f64, %in_19: f64, %out: f64):
          %27 = arith.addf %in, %in_19 : f64
          %28 = arith.cmpf oeq, %27, %cst_10 : f64
          %29 = arith.negf %in_19 : f64
          %30 = arith.cmpf une, %in, %29 : f64
          %31 = arith.andi %28, %30 : i1
          %32 = arith.select %31, %cst, %27 : f64
          linalg.yield %32 : f64
        } -> tensor<f64>
        scf.yield %26 : tensor<f64>
      } else {
        scf.yield %cst_8 : tensor<f64>
      }
      scf.yield %25, %24, %12 : tensor<f64>, tensor<i1>, tensor<i1>
    } else {
      scf.yield %cst_8, %cst_7, %cst_6 : tensor<f64>, tensor<i1>, tensor<i1>
    }
    %4 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%cst_1, %collapsed : tensor<i64>, tensor<i64>) outs(%1 : tensor<i1>) {
    ^bb0(%in: i64, %in_13: i64, %out: i1):
      %10 = arith.cmpi ne, %in, %in_13 : i64
      linalg.yield %10 : i1
    } -> tensor<i1>
    %extracted_11 = tensor.extract %4[] : tensor<i1>
    %5:4 = scf.if %extracted_11 -> (tensor<f64>, tensor<i1>, tensor<i1>, tensor<i1>) {
      %extracted_slice_13 = tensor.extract_slice %arg0[0, 1] [1, 1] [1, 1] : tensor<2x3xf64> to tensor<1x1xf64>
      %collapsed_14 = tensor.collapse_shape %extracted_slice_13 [] : tensor<1x1xf64> into tensor<f64>
      %10 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%collapsed, %cst_5 : tensor<i64>, tensor<i64>) outs(%1 : tensor<i1>) {
      ^bb0(%in: i64, %in_19: i64, %out: i1):
        %29 = arith.cmpi sge, %in, %in_19 : i64
        linalg.yield %29 : i1
      } -> tensor<i1>
      %11 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%collapsed, %cst_4 : tensor<i64>, tensor<i64>) outs(%1 : tensor<i1>) {
      ^bb0(%in: i64, %in_19: i64, %out: i1):
        %29 = arith.cmpi slt, %in, %in_19 : i64
        linalg.yield %29 : i1
      } -> tensor<i1>
      %12 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%10, %11 : tensor<i1>, tensor<i1>) outs(%1 : tensor<i1>) {
      ^bb0(%in: i1, %in_19: i1, %out: i1):
        %29 = arith.andi %in, %in_19 : i1
        linalg.yield %29 : i1
      } -> tensor<i1>
      %13 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%collapsed, %cst_9 : tensor<i64>, tensor<i64>) outs(%1 : tensor<i1>) {
      ^bb0(%in: i64, %in_19: i64, %out: i1):
        %29 = arith.cmpi slt, %in, %in_19 : i64
        linalg.yield %29 : i1
      } -> tensor<i1>
      %14 = tensor.empty() : tensor<i64>
      %15 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%collapsed, %cst_4 : tensor<i64>, tensor<i64>) outs(%14 : tensor<i64>) {
      ^bb0(%in: i64, %in_19: i64, %out: i64):
        %29 = arith.addi %in, %in_19 : i64
        linalg.yield %29 : i64
      } -> tensor<i64>
      %16 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = []} ins(%13, %15, %collapsed : tensor<i1>, tensor<i64>, tensor<i64>) outs(%14 : tensor<i64>) {
      ^bb0(%in: i1, %in_19: i64, %in_20: i64, %out: i64):
        %29 = arith.select %in, %in_19, %in_20 : i64
        linalg.yield %29 : i64
      } -> tensor<i64>
      %extracted_15 = tensor.extract %16[] : tensor<i64>
      %17 = arith.index_cast %extracted_15 : i64 to index
      %18 = arith.minsi %17, %c2 : index
      %19 = arith.maxsi %18, %c0 : index
      %extracted_slice_16 = tensor.extract_slice %arg0[0, %19] [1, 1] [1, 1] : tensor<2x3xf64> to tensor<1x1xf64>
      %collapsed_17 = tensor.collapse_shape %extracted_slice_16 [] : tensor<1x1xf64> into tensor<f64>
      %20 = tensor.empty() : tensor<f64>
      %21 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%collapsed_14, %collapsed_17 : tensor<f64>, tensor<f64>) outs(%20 : tensor<f64>) {
      ^bb0(%in: f64, %in_19: f64, %out: f64):
        %29 = arith.subf %in, %in_19 : f64
        %30 = arith.cmpf oeq, %29, %cst_10 : f64
        %31 = arith.cmpf une, %in, %in_19 : f64
        %32 = arith.andi %30, %31 : i1
        %33 = arith.select %32, %cst, %29 : f64
        linalg.yield %33 : f64
      } -> tensor<f64>
      %22 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%21, %cst_3 : tensor<f64>, tensor<f64>) outs(%20 : tensor<f64>) {
      ^bb0(%in: f64, %in_19: f64, %out: f64):
        %29 = arith.addf %in, %in_19 : f64
        %30 = arith.cmpf oeq, %29, %cst_10 : f64
        %31 = arith.negf %in_19 : f64
        %32 = arith.cmpf une, %in, %31 : f64
        %33 = arith.andi %30, %32 : i1
        %34 = arith.select %33, %cst, %29 : f64
        linalg.yield %34 : f64
      } -> tensor<f64>
      %23 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%22, %cst_8 : tensor<f64>, tensor<f64>) outs(%1 : tensor<i1>) {
      ^bb0(%in: f64, %in_19: f64, %out: i1):
        %29 = arith.cmpf ogt, %in, %in_19 : f64
        linalg.yield %29 : i1
      } -> tensor<i1>
      %extracted_18 = tensor.extract %23[] : tensor<i1>
      %24 = arith.select %extracted_18, %cst_6, %3#1 : tensor<i1>
      %25:2 = scf.if %extracted_18 -> (tensor<f64>, tensor<i1>) {
        %29 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%3#0, %22 : tensor<f64>, tensor<f64>) outs(%20 : tensor<f64>) {
        ^bb0(%in: f64, %in_19: f64, %out: f64):
          %32 = arith.addf %in, %in_19 : f64
          %33 = arith.cmpf oeq, %32, %cst_10 : f64
          %34 = arith.negf %in_19 : f64
          %35 = arith.cmpf une, %in, %34 : f64
          %36 = arith.andi %33, %35 : i1
          %37 = arith.select %36, %cst, %32 : f64
          linalg.yield %37 : f64
        } -> tensor<f64>
        %30 = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%29 : tensor<f64>) outs(%0 : tensor<i8>) {
        ^bb0(%in: f64, %out: i8):
          %32 = math.absf %in : f64
          %33 = arith.cmpf olt, %32, %cst_2 : f64
          %34 = arith.extui %33 : i1 to i8
          linalg.yield %34 : i8
        } -> tensor<i8>
        %31 = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%30 : tensor<i8>) outs(%1 : tensor<i1>) {
        ^bb0(%in: i8, %out: i1):
          %32 = arith.cmpi ne, %in, %c0_i8 : i8
          linalg.yield %32 : i1
        } -> tensor<i1>
        scf.yield %29, %31 : tensor<f64>, tensor<i1>
      } else {
        scf.yield %3#0, %cst_6 : tensor<f64>, tensor<i1>
      }
      %26 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%22, %21 : tensor<f64>, tensor<f64>) outs(%0 : tensor<i8>) {
      ^bb0(%in: f64, %in_19: f64, %out: i8):
        %29 = math.absf %in : f64
        %30 = arith.cmpf olt, %29, %cst_2 : f64
        %31 = math.absf %in_19 : f64
        %32 = arith.cmpf olt, %31, %cst_2 : f64
        %33 = arith.andi %30, %32 : i1
        %34 = arith.extui %33 : i1 to i8
        linalg.yield %34 : i8
      } -> tensor<i8>
      %27 = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%26 : tensor<i8>) outs(%1 : tensor<i1>) {
      ^bb0(%in: i8, %out: i1):
        %29 = arith.cmpi ne, %in, %c0_i8 : i8
        linalg.yield %29 : i1
      } -> tensor<i1>
      %28 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%27, %25#1 : tensor<i1>, tensor<i1>) outs(%1 : tensor<i1>) {
      ^bb0(%in: i1, %in_19: i1, %out: i1):
        %29 = arith.andi %in, %in_19 : i1
        linalg.yield %29 : i1
      } -> tensor<i1>
      scf.yield %25#0, %24, %12, %28 : tensor<f64>, tensor<i1>, tensor<i1>, tensor<i1>
    } else {
      scf.yield %3#0, %3#1, %cst_6, %cst_6 : tensor<f64>, tensor<i1>, tensor<i1>, tensor<i1>
    }
    %6 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%cst_0, %collapsed : tensor<i64>, tensor<i64>) outs(%1 : tensor<i1>) {
    ^bb0(%in: i64, %in_13: i64, %out: i1):
      %10 = arith.cmpi ne, %in, %in_13 : i64
      linalg.yield %10 : i1
    } -> tensor<i1>
    %extracted_12 = tensor.extract %6[] : tensor<i1>
    %7:2 = scf.if %extracted_12 -> (tensor<i1>, tensor<i1>) {
      %extracted_slice_13 = tensor.extract_slice %arg0[0, 2] [1, 1] [1, 1] : tensor<2x3xf64> to tensor<1x1xf64>
      %collapsed_14 = tensor.collapse_shape %extracted_slice_13 [] : tensor<1x1xf64> into tensor<f64>
      %10 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%collapsed, %cst_9 : tensor<i64>, tensor<i64>) outs(%1 : tensor<i1>) {
      ^bb0(%in: i64, %in_19: i64, %out: i1):
        %26 = arith.cmpi slt, %in, %in_19 : i64
        linalg.yield %26 : i1
      } -> tensor<i1>
      %11 = tensor.empty() : tensor<i64>
      %12 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%collapsed, %cst_4 : tensor<i64>, tensor<i64>) outs(%11 : tensor<i64>) {
      ^bb0(%in: i64, %in_19: i64, %out: i64):
        %26 = arith.addi %in, %in_19 : i64
        linalg.yield %26 : i64
      } -> tensor<i64>
      %13 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = []} ins(%10, %12, %collapsed : tensor<i1>, tensor<i64>, tensor<i64>) outs(%11 : tensor<i64>) {
      ^bb0(%in: i1, %in_19: i64, %in_20: i64, %out: i64):
        %26 = arith.select %in, %in_19, %in_20 : i64
        linalg.yield %26 : i64
      } -> tensor<i64>
      %extracted_15 = tensor.extract %13[] : tensor<i64>
      %14 = arith.index_cast %extracted_15 : i64 to index
      %15 = arith.minsi %14, %c2 : index
      %16 = arith.maxsi %15, %c0 : index
      %extracted_slice_16 = tensor.extract_slice %arg0[0, %16] [1, 1] [1, 1] : tensor<2x3xf64> to tensor<1x1xf64>
      %collapsed_17 = tensor.collapse_shape %extracted_slice_16 [] : tensor<1x1xf64> into tensor<f64>
      %17 = tensor.empty() : tensor<f64>
      %18 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%collapsed_14, %collapsed_17 : tensor<f64>, tensor<f64>) outs(%17 : tensor<f64>) {
      ^bb0(%in: f64, %in_19: f64, %out: f64):
        %26 = arith.subf %in, %in_19 : f64
        %27 = arith.cmpf oeq, %26, %cst_10 : f64
        %28 = arith.cmpf une, %in, %in_19 : f64
        %29 = arith.andi %27, %28 : i1
        %30 = arith.select %29, %cst, %26 : f64
        linalg.yield %30 : f64
      } -> tensor<f64>
      %19 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%18, %cst_3 : tensor<f64>, tensor<f64>) outs(%17 : tensor<f64>) {
      ^bb0(%in: f64, %in_19: f64, %out: f64):
        %26 = arith.addf %in, %in_19 : f64
        %27 = arith.cmpf oeq, %26, %cst_10 : f64
        %28 = arith.negf %in_19 : f64
        %29 = arith.cmpf une, %in, %28 : f64
        %30 = arith.andi %27, %29 : i1
        %31 = arith.select %30, %cst, %26 : f64
        linalg.yield %31 : f64
      } -> tensor<f64>
      %20 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%19, %cst_8 : tensor<f64>, tensor<f64>) outs(%1 : tensor<i1>) {
      ^bb0(%in: f64, %in_19: f64, %out: i1):
        %26 = arith.cmpf ogt, %in, %in_19 : f64
        linalg.yield %26 : i1
      } -> tensor<i1>
      %extracted_18 = tensor.extract %20[] : tensor<i1>
      %21 = arith.select %extracted_18, %cst_6, %5#1 : tensor<i1>
      %22 = scf.if %extracted_18 -> (tensor<i1>) {
        %26 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%5#0, %19 : tensor<f64>, tensor<f64>) outs(%17 : tensor<f64>) {
        ^bb0(%in: f64, %in_19: f64, %out: f64):
          %29 = arith.addf %in, %in_19 : f64
          %30 = arith.cmpf oeq, %29, %cst_10 : f64
          %31 = arith.negf %in_19 : f64
          %32 = arith.cmpf une, %in, %31 : f64
          %33 = arith.andi %30, %32 : i1
          %34 = arith.select %33, %cst, %29 : f64
          linalg.yield %34 : f64
        } -> tensor<f64>
        %27 = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%26 : tensor<f64>) outs(%0 : tensor<i8>) {
        ^bb0(%in: f64, %out: i8):
          %29 = math.absf %in : f64
          %30 = arith.cmpf olt, %29, %cst_2 : f64
          %31 = arith.extui %30 : i1 to i8
          linalg.yield %31 : i8
        } -> tensor<i8>
        %28 = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%27 : tensor<i8>) outs(%1 : tensor<i1>) {
        ^bb0(%in: i8, %out: i1):
          %29 = arith.cmpi ne, %in, %c0_i8 : i8
          linalg.yield %29 : i1
        } -> tensor<i1>
        scf.yield %28 : tensor<i1>
      } else {
        scf.yield %cst_6 : tensor<i1>
      }
      %23 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%19, %18 : tensor<f64>, tensor<f64>) outs(%0 : tensor<i8>) {
      ^bb0(%in: f64, %in_19: f64, %out: i8):
        %26 = math.absf %in : f64
        %27 = arith.cmpf olt, %26, %cst_2 : f64
        %28 = math.absf %in_19 : f64
        %29 = arith.cmpf olt, %28, %cst_2 : f64
        %30 = arith.andi %27, %29 : i1
        %31 = arith.extui %30 : i1 to i8
        linalg.yield %31 : i8
      } -> tensor<i8>
      %24 = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%23 : tensor<i8>) outs(%1 : tensor<i1>) {
      ^bb0(%in: i8, %out: i1):
        %26 = arith.cmpi ne, %in, %c0_i8 : i8
        linalg.yield %26 : i1
      } -> tensor<i1>
      %25 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%24, %22 : tensor<i1>, tensor<i1>) outs(%1 : tensor<i1>) {
      ^bb0(%in: i1, %in_19: i1, %out: i1):
        %26 = arith.andi %in, %in_19 : i1
        linalg.yield %26 : i1
      } -> tensor<i1>
      scf.yield %21, %25 : tensor<i1>, tensor<i1>
    } else {
      scf.yield %5#1, %cst_6 : tensor<i1>, tensor<i1>
    }
    %8 = tensor.empty() : tensor<8xi8>
    %9 = linalg.generic {indexing_maps = [#map1, #map1, #map1, #map1, #map1, #map1, #map1, #map1, #map2], iterator_types = ["parallel"]} ins(%cst_6, %3#2, %5#2, %cst_6, %7#0, %cst_6, %5#3, %7#1 : tensor<i1>, tensor<i1>, tensor<i1>, tensor<i1>, tensor<i1>, tensor<i1>, tensor<i1>, tensor<i1>) outs(%8 : tensor<8xi8>) {
    ^bb0(%in: i1, %in_13: i1, %in_14: i1, %in_15: i1, %in_16: i1, %in_17: i1, %in_18: i1, %in_19: i1, %out: i8):
      %10 = linalg.index 0 : index
      %11 = arith.extui %in : i1 to i8
      %12 = arith.extui %in_13 : i1 to i8
      %13 = arith.extui %in_14 : i1 to i8
      %14 = arith.extui %in_15 : i1 to i8
      %15 = arith.extui %in_16 : i1 to i8
      %16 = arith.extui %in_17 : i1 to i8
      %17 = arith.extui %in_18 : i1 to i8
      %18 = arith.extui %in_19 : i1 to i8
      %19 = arith.cmpi eq, %10, %c6 : index
      %20 = arith.select %19, %17, %18 : i8
      %21 = arith.cmpi eq, %10, %c5 : index
      %22 = arith.select %21, %16, %20 : i8
      %23 = arith.cmpi eq, %10, %c4 : index
      %24 = arith.select %23, %15, %22 : i8
      %25 = arith.cmpi eq, %10, %c3 : index
      %26 = arith.select %25, %14, %24 : i8
      %27 = arith.cmpi eq, %10, %c2 : index
      %28 = arith.select %27, %13, %26 : i8
      %29 = arith.cmpi eq, %10, %c1 : index
      %30 = arith.select %29, %12, %28 : i8
      %31 = arith.cmpi eq, %10, %c0 : index
      %32 = arith.select %31, %11, %30 : i8
      linalg.yield %32 : i8
    } -> tensor<8xi8>
    return %9 : tensor<8xi8>
  }
}
