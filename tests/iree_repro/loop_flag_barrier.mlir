#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> ()>
#map2 = affine_map<() -> ()>
#map3 = affine_map<(d0) -> (d0)>
#map4 = affine_map<(d0) -> ()>
module {
  func.func @f3(%arg0: tensor<300x4xf64>, %arg1: tensor<300x4xf64>, %arg2: tensor<4x4xf64>, %arg3: tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<i64>, tensor<8xi8>) attributes {pyfront.guards = [["value", "/tmp/exp/g5.py:27:0", "no subnormal float in arg0 (IREE's CPU code reads subnormals as zero)"], ["value", "/tmp/exp/g5.py:27:0", "no subnormal float in arg1 (IREE's CPU code reads subnormals as zero)"], ["value", "/tmp/exp/g5.py:27:0", "no subnormal float in arg2 (IREE's CPU code reads subnormals as zero)"], ["value", "/tmp/exp/g5.py:31:8", "Python int add stays within int64 (Python's ints grow past it)"], ["value", "/tmp/exp/g5.py:31:8", "Python int add stays within int64 (Python's ints grow past it)"], ["fp-error", "/tmp/exp/g5.py:31:8", "floating-point overflow or invalid value in add"], ["fp-error", "/tmp/exp/g5.py:32:23", "floating-point overflow or invalid value in matmul; or overflow or invalid value in multiply at /tmp/exp/g5.py:32:15; or overflow or invalid value in add at /tmp/exp/g5.py:32:8"], ["fp-error", "/tmp/exp/g5.py:29:4", "floating-point overflow or invalid value in add, matmul, multiply inside the loop"]], pyfront.inputs = ["arg0", "arg1", "arg2", "arg3"], pyfront.outputs = ["return0", "return1", "guards"]} {
    %c299 = arith.constant 299 : index
    %c127_i8 = arith.constant 127 : i8
    %cst = arith.constant 4.5569512622227484E-305 : f64
    %cst_0 = arith.constant 1.8446744073709552E+19 : f64
    %cst_1 = arith.constant 0x7FF8000000000000 : f64
    %c0_i64 = arith.constant 0 : i64
    %true = arith.constant true
    %c-1_i64 = arith.constant -1 : i64
    %cst_2 = arith.constant 0xFFF0000000000000 : f64
    %c0_i8 = arith.constant 0 : i8
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %c6 = arith.constant 6 : index
    %cst_3 = arith.constant 0x7FF0000000000000 : f64
    %cst_4 = arith.constant dense<true> : tensor<i1>
    %c300 = arith.constant 300 : index
    %c1 = arith.constant 1 : index
    %cst_5 = arith.constant dense<5.000000e-03> : tensor<f64>
    %cst_6 = arith.constant dense<4.6116860184273879E+18> : tensor<f64>
    %cst_7 = arith.constant dense<0.000000e+00> : tensor<f64>
    %cst_8 = arith.constant dense<0> : tensor<i64>
    %cst_9 = arith.constant 2.2250738585072014E-308 : f64
    %cst_10 = arith.constant 0.000000e+00 : f64
    %c1_i8 = arith.constant 1 : i8
    %0 = tensor.empty() : tensor<i8>
    %1 = linalg.fill ins(%c1_i8 : i8) outs(%0 : tensor<i8>) -> tensor<i8>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "reduction"]} ins(%arg0 : tensor<300x4xf64>) outs(%1 : tensor<i8>) {
    ^bb0(%in: f64, %out: i8):
      %38 = arith.cmpf oeq, %in, %cst_10 : f64
      %39 = math.absf %in : f64
      %40 = arith.cmpf uge, %39, %cst_9 : f64
      %41 = arith.ori %38, %40 : i1
      %42 = arith.extui %41 : i1 to i8
      %43 = arith.minsi %out, %42 : i8
      linalg.yield %43 : i8
    } -> tensor<i8>
    %3 = tensor.empty() : tensor<i1>
    %4 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%2 : tensor<i8>) outs(%3 : tensor<i1>) {
    ^bb0(%in: i8, %out: i1):
      %38 = arith.cmpi ne, %in, %c0_i8 : i8
      linalg.yield %38 : i1
    } -> tensor<i1>
    %5 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "reduction"]} ins(%arg1 : tensor<300x4xf64>) outs(%1 : tensor<i8>) {
    ^bb0(%in: f64, %out: i8):
      %38 = arith.cmpf oeq, %in, %cst_10 : f64
      %39 = math.absf %in : f64
      %40 = arith.cmpf uge, %39, %cst_9 : f64
      %41 = arith.ori %38, %40 : i1
      %42 = arith.extui %41 : i1 to i8
      %43 = arith.minsi %out, %42 : i8
      linalg.yield %43 : i8
    } -> tensor<i8>
    %6 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%5 : tensor<i8>) outs(%3 : tensor<i1>) {
    ^bb0(%in: i8, %out: i1):
      %38 = arith.cmpi ne, %in, %c0_i8 : i8
      linalg.yield %38 : i1
    } -> tensor<i1>
    %7 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "reduction"]} ins(%arg2 : tensor<4x4xf64>) outs(%1 : tensor<i8>) {
    ^bb0(%in: f64, %out: i8):
      %38 = arith.cmpf oeq, %in, %cst_10 : f64
      %39 = math.absf %in : f64
      %40 = arith.cmpf uge, %39, %cst_9 : f64
      %41 = arith.ori %38, %40 : i1
      %42 = arith.extui %41 : i1 to i8
      %43 = arith.minsi %out, %42 : i8
      linalg.yield %43 : i8
    } -> tensor<i8>
    %8 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%7 : tensor<i8>) outs(%3 : tensor<i1>) {
    ^bb0(%in: i8, %out: i1):
      %38 = arith.cmpi ne, %in, %c0_i8 : i8
      linalg.yield %38 : i1
    } -> tensor<i1>
    %extracted_slice = tensor.extract_slice %arg0[0, 0] [1, 4] [1, 1] : tensor<300x4xf64> to tensor<1x4xf64>
    %collapsed = tensor.collapse_shape %extracted_slice [[0, 1]] : tensor<1x4xf64> into tensor<4xf64>
    %9 = tensor.empty() : tensor<f64>
    %10 = linalg.fill ins(%cst_2 : f64) outs(%9 : tensor<f64>) -> tensor<f64>
    %11 = tensor.empty() : tensor<i64>
    %12 = linalg.fill ins(%c-1_i64 : i64) outs(%11 : tensor<i64>) -> tensor<i64>
    %13:2 = linalg.generic {indexing_maps = [#map3, #map4, #map4], iterator_types = ["reduction"]} ins(%collapsed : tensor<4xf64>) outs(%10, %12 : tensor<f64>, tensor<i64>) {
    ^bb0(%in: f64, %out: f64, %out_13: i64):
      %38 = linalg.index 0 : index
      %39 = arith.index_cast %38 : index to i64
      %40 = arith.cmpf ogt, %in, %out : f64
      %41 = arith.cmpf uno, %in, %in : f64
      %42 = arith.cmpf uno, %out, %out : f64
      %43 = arith.xori %42, %true : i1
      %44 = arith.andi %41, %43 : i1
      %45 = arith.ori %40, %44 : i1
      %46 = arith.cmpi slt, %out_13, %c0_i64 : i64
      %47 = arith.ori %45, %46 : i1
      %48 = arith.select %47, %in, %out : f64
      %49 = arith.select %47, %39, %out_13 : i64
      linalg.yield %48, %49 : f64, i64
    } -> (tensor<f64>, tensor<i64>)
    %extracted_slice_11 = tensor.extract_slice %arg1[0, 0] [1, 4] [1, 1] : tensor<300x4xf64> to tensor<1x4xf64>
    %collapsed_12 = tensor.collapse_shape %extracted_slice_11 [[0, 1]] : tensor<1x4xf64> into tensor<4xf64>
    %14:2 = linalg.generic {indexing_maps = [#map3, #map4, #map4], iterator_types = ["reduction"]} ins(%collapsed_12 : tensor<4xf64>) outs(%10, %12 : tensor<f64>, tensor<i64>) {
    ^bb0(%in: f64, %out: f64, %out_13: i64):
      %38 = linalg.index 0 : index
      %39 = arith.index_cast %38 : index to i64
      %40 = arith.cmpf ogt, %in, %out : f64
      %41 = arith.cmpf uno, %in, %in : f64
      %42 = arith.cmpf uno, %out, %out : f64
      %43 = arith.xori %42, %true : i1
      %44 = arith.andi %41, %43 : i1
      %45 = arith.ori %40, %44 : i1
      %46 = arith.cmpi slt, %out_13, %c0_i64 : i64
      %47 = arith.ori %45, %46 : i1
      %48 = arith.select %47, %in, %out : f64
      %49 = arith.select %47, %39, %out_13 : i64
      linalg.yield %48, %49 : f64, i64
    } -> (tensor<f64>, tensor<i64>)
    %15 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%13#1, %14#1 : tensor<i64>, tensor<i64>) outs(%3 : tensor<i1>) {
    ^bb0(%in: i64, %in_13: i64, %out: i1):
      %38 = arith.cmpi eq, %in, %in_13 : i64
      linalg.yield %38 : i1
    } -> tensor<i1>
    %16 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%15 : tensor<i1>) outs(%11 : tensor<i64>) {
    ^bb0(%in: i1, %out: i64):
      %38 = arith.extui %in : i1 to i64
      linalg.yield %38 : i64
    } -> tensor<i64>
    %17 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%16 : tensor<i64>) outs(%9 : tensor<f64>) {
    ^bb0(%in: i64, %out: f64):
      %38 = arith.sitofp %in : i64 to f64
      linalg.yield %38 : f64
    } -> tensor<f64>
    %18 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%cst_7, %17 : tensor<f64>, tensor<f64>) outs(%9 : tensor<f64>) {
    ^bb0(%in: f64, %in_13: f64, %out: f64):
      %38 = arith.addf %in, %in_13 : f64
      %39 = arith.cmpf oeq, %38, %cst_10 : f64
      %40 = arith.negf %in_13 : f64
      %41 = arith.cmpf une, %in, %40 : f64
      %42 = arith.andi %39, %41 : i1
      %43 = arith.select %42, %cst_1, %38 : f64
      linalg.yield %43 : f64
    } -> tensor<f64>
    %19 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%18 : tensor<f64>) outs(%9 : tensor<f64>) {
    ^bb0(%in: f64, %out: f64):
      %38 = math.absf %in : f64
      linalg.yield %38 : f64
    } -> tensor<f64>
    %20 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%19, %cst_6 : tensor<f64>, tensor<f64>) outs(%3 : tensor<i1>) {
    ^bb0(%in: f64, %in_13: f64, %out: i1):
      %38 = arith.cmpf olt, %in, %in_13 : f64
      linalg.yield %38 : i1
    } -> tensor<i1>
    %21 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%cst_8, %16 : tensor<i64>, tensor<i64>) outs(%11 : tensor<i64>) {
    ^bb0(%in: i64, %in_13: i64, %out: i64):
      %38 = arith.addi %in, %in_13 : i64
      linalg.yield %38 : i64
    } -> tensor<i64>
    %22 = tensor.empty() : tensor<4x1xf64>
    %transposed = linalg.transpose ins(%extracted_slice : tensor<1x4xf64>) outs(%22 : tensor<4x1xf64>) permutation = [1, 0] 
    %23 = tensor.empty() : tensor<4x4xf64>
    %24 = linalg.fill ins(%cst_10 : f64) outs(%23 : tensor<4x4xf64>) -> tensor<4x4xf64>
    %25 = linalg.matmul ins(%transposed, %extracted_slice : tensor<4x1xf64>, tensor<1x4xf64>) outs(%24 : tensor<4x4xf64>) -> tensor<4x4xf64>
    %26 = util.optimization_barrier %25 : tensor<4x4xf64>
    %27 = linalg.generic {indexing_maps = [#map1, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%cst_5, %26 : tensor<f64>, tensor<4x4xf64>) outs(%23 : tensor<4x4xf64>) {
    ^bb0(%in: f64, %in_13: f64, %out: f64):
      %38 = arith.mulf %in, %in_13 : f64
      %39 = arith.mulf %in, %cst_0 : f64
      %40 = arith.mulf %39, %in_13 : f64
      %41 = arith.cmpf oeq, %38, %cst_10 : f64
      %42 = math.absf %40 : f64
      %43 = arith.cmpf ogt, %42, %cst : f64
      %44 = arith.andi %41, %43 : i1
      %45 = arith.select %44, %cst_1, %38 : f64
      linalg.yield %45 : f64
    } -> tensor<4x4xf64>
    %28 = util.optimization_barrier %27 : tensor<4x4xf64>
    %29 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg2, %28 : tensor<4x4xf64>, tensor<4x4xf64>) outs(%23 : tensor<4x4xf64>) {
    ^bb0(%in: f64, %in_13: f64, %out: f64):
      %38 = arith.addf %in, %in_13 : f64
      %39 = arith.cmpf oeq, %38, %cst_10 : f64
      %40 = arith.negf %in_13 : f64
      %41 = arith.cmpf une, %in, %40 : f64
      %42 = arith.andi %39, %41 : i1
      %43 = arith.select %42, %cst_1, %38 : f64
      linalg.yield %43 : f64
    } -> tensor<4x4xf64>
    %30 = util.optimization_barrier %29 : tensor<4x4xf64>
    %31:4 = scf.for %arg4 = %c1 to %c300 step %c1 iter_args(%arg5 = %21, %arg6 = %30, %arg7 = %cst_4, %arg8 = %cst_4) -> (tensor<i64>, tensor<4x4xf64>, tensor<i1>, tensor<i1>) {
      %38 = util.optimization_barrier %arg5 : tensor<i64>
      %39 = util.optimization_barrier %arg7 : tensor<i1>
      %40 = util.optimization_barrier %arg8 : tensor<i1>
      %41 = arith.minsi %arg4, %c299 : index
      %42 = arith.maxsi %41, %c0 : index
      %extracted_slice_13 = tensor.extract_slice %arg0[%42, 0] [1, 4] [1, 1] : tensor<300x4xf64> to tensor<1x4xf64>
      %collapsed_14 = tensor.collapse_shape %extracted_slice_13 [[0, 1]] : tensor<1x4xf64> into tensor<4xf64>
      %43:2 = linalg.generic {indexing_maps = [#map3, #map4, #map4], iterator_types = ["reduction"]} ins(%collapsed_14 : tensor<4xf64>) outs(%10, %12 : tensor<f64>, tensor<i64>) {
      ^bb0(%in: f64, %out: f64, %out_18: i64):
        %66 = linalg.index 0 : index
        %67 = arith.index_cast %66 : index to i64
        %68 = arith.cmpf ogt, %in, %out : f64
        %69 = arith.cmpf uno, %in, %in : f64
        %70 = arith.cmpf uno, %out, %out : f64
        %71 = arith.xori %70, %true : i1
        %72 = arith.andi %69, %71 : i1
        %73 = arith.ori %68, %72 : i1
        %74 = arith.cmpi slt, %out_18, %c0_i64 : i64
        %75 = arith.ori %73, %74 : i1
        %76 = arith.select %75, %in, %out : f64
        %77 = arith.select %75, %67, %out_18 : i64
        linalg.yield %76, %77 : f64, i64
      } -> (tensor<f64>, tensor<i64>)
      %extracted_slice_15 = tensor.extract_slice %arg1[%42, 0] [1, 4] [1, 1] : tensor<300x4xf64> to tensor<1x4xf64>
      %collapsed_16 = tensor.collapse_shape %extracted_slice_15 [[0, 1]] : tensor<1x4xf64> into tensor<4xf64>
      %44:2 = linalg.generic {indexing_maps = [#map3, #map4, #map4], iterator_types = ["reduction"]} ins(%collapsed_16 : tensor<4xf64>) outs(%10, %12 : tensor<f64>, tensor<i64>) {
      ^bb0(%in: f64, %out: f64, %out_18: i64):
        %66 = linalg.index 0 : index
        %67 = arith.index_cast %66 : index to i64
        %68 = arith.cmpf ogt, %in, %out : f64
        %69 = arith.cmpf uno, %in, %in : f64
        %70 = arith.cmpf uno, %out, %out : f64
        %71 = arith.xori %70, %true : i1
        %72 = arith.andi %69, %71 : i1
        %73 = arith.ori %68, %72 : i1
        %74 = arith.cmpi slt, %out_18, %c0_i64 : i64
        %75 = arith.ori %73, %74 : i1
        %76 = arith.select %75, %in, %out : f64
        %77 = arith.select %75, %67, %out_18 : i64
        linalg.yield %76, %77 : f64, i64
      } -> (tensor<f64>, tensor<i64>)
      %45 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%43#1, %44#1 : tensor<i64>, tensor<i64>) outs(%3 : tensor<i1>) {
      ^bb0(%in: i64, %in_18: i64, %out: i1):
        %66 = arith.cmpi eq, %in, %in_18 : i64
        linalg.yield %66 : i1
      } -> tensor<i1>
      %46 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%45 : tensor<i1>) outs(%11 : tensor<i64>) {
      ^bb0(%in: i1, %out: i64):
        %66 = arith.extui %in : i1 to i64
        linalg.yield %66 : i64
      } -> tensor<i64>
      %47 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%38 : tensor<i64>) outs(%9 : tensor<f64>) {
      ^bb0(%in: i64, %out: f64):
        %66 = arith.sitofp %in : i64 to f64
        linalg.yield %66 : f64
      } -> tensor<f64>
      %48 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%46 : tensor<i64>) outs(%9 : tensor<f64>) {
      ^bb0(%in: i64, %out: f64):
        %66 = arith.sitofp %in : i64 to f64
        linalg.yield %66 : f64
      } -> tensor<f64>
      %49 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%47, %48 : tensor<f64>, tensor<f64>) outs(%9 : tensor<f64>) {
      ^bb0(%in: f64, %in_18: f64, %out: f64):
        %66 = arith.addf %in, %in_18 : f64
        %67 = arith.cmpf oeq, %66, %cst_10 : f64
        %68 = arith.negf %in_18 : f64
        %69 = arith.cmpf une, %in, %68 : f64
        %70 = arith.andi %67, %69 : i1
        %71 = arith.select %70, %cst_1, %66 : f64
        linalg.yield %71 : f64
      } -> tensor<f64>
      %50 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%49 : tensor<f64>) outs(%9 : tensor<f64>) {
      ^bb0(%in: f64, %out: f64):
        %66 = math.absf %in : f64
        linalg.yield %66 : f64
      } -> tensor<f64>
      %51 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%50, %cst_6 : tensor<f64>, tensor<f64>) outs(%3 : tensor<i1>) {
      ^bb0(%in: f64, %in_18: f64, %out: i1):
        %66 = arith.cmpf olt, %in, %in_18 : f64
        linalg.yield %66 : i1
      } -> tensor<i1>
      %52 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%38, %46 : tensor<i64>, tensor<i64>) outs(%11 : tensor<i64>) {
      ^bb0(%in: i64, %in_18: i64, %out: i64):
        %66 = arith.addi %in, %in_18 : i64
        linalg.yield %66 : i64
      } -> tensor<i64>
      %transposed_17 = linalg.transpose ins(%extracted_slice_13 : tensor<1x4xf64>) outs(%22 : tensor<4x1xf64>) permutation = [1, 0] 
      %53 = linalg.matmul ins(%transposed_17, %extracted_slice_13 : tensor<4x1xf64>, tensor<1x4xf64>) outs(%24 : tensor<4x4xf64>) -> tensor<4x4xf64>
      %54 = linalg.generic {indexing_maps = [#map1, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%cst_5, %53 : tensor<f64>, tensor<4x4xf64>) outs(%23 : tensor<4x4xf64>) {
      ^bb0(%in: f64, %in_18: f64, %out: f64):
        %66 = arith.mulf %in, %in_18 : f64
        %67 = arith.mulf %in, %cst_0 : f64
        %68 = arith.mulf %67, %in_18 : f64
        %69 = arith.cmpf oeq, %66, %cst_10 : f64
        %70 = math.absf %68 : f64
        %71 = arith.cmpf ogt, %70, %cst : f64
        %72 = arith.andi %69, %71 : i1
        %73 = arith.select %72, %cst_1, %66 : f64
        linalg.yield %73 : f64
      } -> tensor<4x4xf64>
      %55 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg6, %54 : tensor<4x4xf64>, tensor<4x4xf64>) outs(%23 : tensor<4x4xf64>) {
      ^bb0(%in: f64, %in_18: f64, %out: f64):
        %66 = arith.addf %in, %in_18 : f64
        %67 = arith.cmpf oeq, %66, %cst_10 : f64
        %68 = arith.negf %in_18 : f64
        %69 = arith.cmpf une, %in, %68 : f64
        %70 = arith.andi %67, %69 : i1
        %71 = arith.select %70, %cst_1, %66 : f64
        linalg.yield %71 : f64
      } -> tensor<4x4xf64>
      %56 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%39, %51 : tensor<i1>, tensor<i1>) outs(%3 : tensor<i1>) {
      ^bb0(%in: i1, %in_18: i1, %out: i1):
        %66 = arith.andi %in, %in_18 : i1
        linalg.yield %66 : i1
      } -> tensor<i1>
      %57 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%50 : tensor<f64>) outs(%0 : tensor<i8>) {
      ^bb0(%in: f64, %out: i8):
        %66 = math.absf %in : f64
        %67 = arith.cmpf olt, %66, %cst_3 : f64
        %68 = arith.extui %67 : i1 to i8
        linalg.yield %68 : i8
      } -> tensor<i8>
      %58 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%57 : tensor<i8>) outs(%3 : tensor<i1>) {
      ^bb0(%in: i8, %out: i1):
        %66 = arith.cmpi ne, %in, %c0_i8 : i8
        linalg.yield %66 : i1
      } -> tensor<i1>
      %59 = tensor.empty() : tensor<4x4xi8>
      %60 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%55 : tensor<4x4xf64>) outs(%59 : tensor<4x4xi8>) {
      ^bb0(%in: f64, %out: i8):
        %66 = math.absf %in : f64
        %67 = arith.cmpf olt, %66, %cst_3 : f64
        %68 = arith.extui %67 : i1 to i8
        linalg.yield %68 : i8
      } -> tensor<4x4xi8>
      %61 = linalg.fill ins(%c127_i8 : i8) outs(%0 : tensor<i8>) -> tensor<i8>
      %62 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "reduction"]} ins(%60 : tensor<4x4xi8>) outs(%61 : tensor<i8>) {
      ^bb0(%in: i8, %out: i8):
        %66 = arith.minsi %in, %out : i8
        linalg.yield %66 : i8
      } -> tensor<i8>
      %63 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%62 : tensor<i8>) outs(%3 : tensor<i1>) {
      ^bb0(%in: i8, %out: i1):
        %66 = arith.cmpi ne, %in, %c0_i8 : i8
        linalg.yield %66 : i1
      } -> tensor<i1>
      %64 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%40, %58 : tensor<i1>, tensor<i1>) outs(%3 : tensor<i1>) {
      ^bb0(%in: i1, %in_18: i1, %out: i1):
        %66 = arith.andi %in, %in_18 : i1
        linalg.yield %66 : i1
      } -> tensor<i1>
      %65 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%64, %63 : tensor<i1>, tensor<i1>) outs(%3 : tensor<i1>) {
      ^bb0(%in: i1, %in_18: i1, %out: i1):
        %66 = arith.andi %in, %in_18 : i1
        linalg.yield %66 : i1
      } -> tensor<i1>
      scf.yield %52, %55, %56, %65 : tensor<i64>, tensor<4x4xf64>, tensor<i1>, tensor<i1>
    }
    %32 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%19, %18 : tensor<f64>, tensor<f64>) outs(%0 : tensor<i8>) {
    ^bb0(%in: f64, %in_13: f64, %out: i8):
      %38 = math.absf %in : f64
      %39 = arith.cmpf olt, %38, %cst_3 : f64
      %40 = math.absf %in_13 : f64
      %41 = arith.cmpf olt, %40, %cst_3 : f64
      %42 = arith.andi %39, %41 : i1
      %43 = arith.extui %42 : i1 to i8
      linalg.yield %43 : i8
    } -> tensor<i8>
    %33 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%32 : tensor<i8>) outs(%3 : tensor<i1>) {
    ^bb0(%in: i8, %out: i1):
      %38 = arith.cmpi ne, %in, %c0_i8 : i8
      linalg.yield %38 : i1
    } -> tensor<i1>
    %34 = linalg.generic {indexing_maps = [#map, #map, #map, #map1], iterator_types = ["reduction", "reduction"]} ins(%26, %28, %30 : tensor<4x4xf64>, tensor<4x4xf64>, tensor<4x4xf64>) outs(%1 : tensor<i8>) {
    ^bb0(%in: f64, %in_13: f64, %in_14: f64, %out: i8):
      %38 = math.absf %in : f64
      %39 = arith.cmpf olt, %38, %cst_3 : f64
      %40 = math.absf %in_13 : f64
      %41 = arith.cmpf olt, %40, %cst_3 : f64
      %42 = arith.andi %39, %41 : i1
      %43 = math.absf %in_14 : f64
      %44 = arith.cmpf olt, %43, %cst_3 : f64
      %45 = arith.andi %42, %44 : i1
      %46 = arith.extui %45 : i1 to i8
      %47 = arith.andi %out, %46 : i8
      linalg.yield %47 : i8
    } -> tensor<i8>
    %35 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%34 : tensor<i8>) outs(%3 : tensor<i1>) {
    ^bb0(%in: i8, %out: i1):
      %38 = arith.cmpi ne, %in, %c0_i8 : i8
      linalg.yield %38 : i1
    } -> tensor<i1>
    %36 = tensor.empty() : tensor<8xi8>
    %37 = linalg.generic {indexing_maps = [#map4, #map4, #map4, #map4, #map4, #map4, #map4, #map4, #map3], iterator_types = ["parallel"]} ins(%4, %6, %8, %20, %31#2, %33, %35, %31#3 : tensor<i1>, tensor<i1>, tensor<i1>, tensor<i1>, tensor<i1>, tensor<i1>, tensor<i1>, tensor<i1>) outs(%36 : tensor<8xi8>) {
    ^bb0(%in: i1, %in_13: i1, %in_14: i1, %in_15: i1, %in_16: i1, %in_17: i1, %in_18: i1, %in_19: i1, %out: i8):
      %38 = linalg.index 0 : index
      %39 = arith.extui %in : i1 to i8
      %40 = arith.extui %in_13 : i1 to i8
      %41 = arith.extui %in_14 : i1 to i8
      %42 = arith.extui %in_15 : i1 to i8
      %43 = arith.extui %in_16 : i1 to i8
      %44 = arith.extui %in_17 : i1 to i8
      %45 = arith.extui %in_18 : i1 to i8
      %46 = arith.extui %in_19 : i1 to i8
      %47 = arith.cmpi eq, %38, %c6 : index
      %48 = arith.select %47, %45, %46 : i8
      %49 = arith.cmpi eq, %38, %c5 : index
      %50 = arith.select %49, %44, %48 : i8
      %51 = arith.cmpi eq, %38, %c4 : index
      %52 = arith.select %51, %43, %50 : i8
      %53 = arith.cmpi eq, %38, %c3 : index
      %54 = arith.select %53, %42, %52 : i8
      %55 = arith.cmpi eq, %38, %c2 : index
      %56 = arith.select %55, %41, %54 : i8
      %57 = arith.cmpi eq, %38, %c1 : index
      %58 = arith.select %57, %40, %56 : i8
      %59 = arith.cmpi eq, %38, %c0 : index
      %60 = arith.select %59, %39, %58 : i8
      linalg.yield %60 : i8
    } -> tensor<8xi8>
    return %31#1, %31#0, %37 : tensor<4x4xf64>, tensor<i64>, tensor<8xi8>
  }
}
