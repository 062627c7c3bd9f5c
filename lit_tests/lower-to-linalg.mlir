// RUN: pyfront-opt %s --split-input-file --lower-to-linalg | filecheck %s
// RUN: pyfront-opt %s --split-input-file --lower-to-linalg --mlir-print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC
// RUN: pyfront-opt %s --split-input-file --lower-to-linalg --canonicalize | filecheck %s --check-prefix=CANON

/// Elementwise add broadcasts the lower-rank operand by dropping its leading dim
/// from the indexing map; the body is the float add, NaN where it is 0 but
/// x != -y and |x| < 2**-102 (IREE's CPU code flushed NumPy's subnormal sum:
/// subnormal.py).

// CHECK-DAG: #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @add_broadcast
// CHECK-SAME:    (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK:         %[[INIT:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK-SAME:      indexing_maps = [#[[$ID2]], #[[$ROW]], #[[$ID2]]]
// CHECK-SAME:      iterator_types = ["parallel", "parallel"]
// CHECK-SAME:      ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32>) outs(%[[INIT]] : tensor<4x8xf32>)
// CHECK:         ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT:      %[[ZERO:.*]] = arith.cmpf oeq, %[[S]], %{{.*}} : f32
// CHECK-NEXT:      %[[NEG:.*]] = arith.negf %[[Y]] : f32
// CHECK-NEXT:      %[[NOT_OPPOSITE:.*]] = arith.cmpf une, %[[X]], %[[NEG]] : f32
// CHECK-NEXT:      %[[CANCELLED:.*]] = arith.andi %[[ZERO]], %[[NOT_OPPOSITE]] : i1
// CHECK-NEXT:      %[[MAGNITUDE:.*]] = math.absf %[[X]] : f32
// CHECK-NEXT:      %[[SMALL:.*]] = arith.cmpf olt, %[[MAGNITUDE]], %{{.*}} : f32
// CHECK-NEXT:      %[[FLUSHED:.*]] = arith.andi %[[CANCELLED]], %[[SMALL]] : i1
// CHECK-NEXT:      %[[MARKED:.*]] = arith.select %[[FLUSHED]], %{{.*}}, %[[S]] : f32
// CHECK-NEXT:      linalg.yield %[[MARKED]] : f32
// CHECK:         return %[[R]] : tensor<4x8xf32>
// CHECK-NOT:     pyfront.
func.func @add_broadcast(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "pyfront.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

/// A size-1 dim broadcast against a larger one reads index 0; a signed integer
/// comparison yields i1.

// CHECK-DAG: #[[$COL0:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[$ROW0:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @less_int
// CHECK:         linalg.generic
// CHECK-SAME:      indexing_maps = [#[[$COL0]], #[[$ROW0]], #{{.*}}]
// CHECK-SAME:      outs(%{{.*}} : tensor<3x5xi1>)
// CHECK:         arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK-NOT:     arith.cmpi ult
func.func @less_int(%a: tensor<3x1xi32>, %b: tensor<1x5xi32>) -> tensor<3x5xi1> {
  %0 = "pyfront.less"(%a, %b) : (tensor<3x1xi32>, tensor<1x5xi32>) -> tensor<3x5xi1>
  return %0 : tensor<3x5xi1>
}

// -----

/// NumPy's maximum is `a if (a > b or isnan(a)) else b`: NaN propagates from
/// either side and ties (+0 vs -0) give b, so neither maxnumf nor maximumf fits.

// CHECK-LABEL: func.func @maximum_nan
// CHECK:         ^bb0(%[[A:.*]]: f64, %[[B:.*]]: f64, %{{.*}}: f64):
// CHECK-NOT:       arith.max
// CHECK:           %[[GT:.*]] = arith.cmpf ogt, %[[A]], %[[B]] : f64
// CHECK:           %[[NAN:.*]] = arith.cmpf uno, %[[A]], %[[A]] : f64
// CHECK:           %[[TAKE:.*]] = arith.ori %[[GT]], %[[NAN]] : i1
// CHECK:           %[[R:.*]] = arith.select %[[TAKE]], %[[A]], %[[B]] : f64
// CHECK:           linalg.yield %[[R]] : f64
func.func @maximum_nan(%a: tensor<4xf64>, %b: tensor<4xf64>) -> tensor<4xf64> {
  %0 = "pyfront.maximum"(%a, %b) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

/// A sum with keepdims reduces into a filled rank-1 init, then expands to 3x1.

// CHECK-LABEL: func.func @sum_keepdims
// CHECK-SAME:    (%[[A:.*]]: tensor<3x4xf64>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f64) outs(%{{.*}} : tensor<3xf64>)
// CHECK:         %[[SUM:.*]] = linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "reduction"]
// CHECK-SAME:      ins(%[[A]] : tensor<3x4xf64>) outs(%[[FILL]] : tensor<3xf64>)
// CHECK:           arith.addf
// CHECK:         %[[E:.*]] = tensor.expand_shape %[[SUM]] {{\[}}[0, 1]] output_shape [3, 1]
// CHECK:         return %[[E]] : tensor<3x1xf64>
func.func @sum_keepdims(%a: tensor<3x4xf64>) -> tensor<3x1xf64> {
  %0 = "pyfront.sum"(%a) {axes = array<i64: 1>, keepdims = true} : (tensor<3x4xf64>) -> tensor<3x1xf64>
  return %0 : tensor<3x1xf64>
}

// -----

/// A sum without keepdims returns the reduction result directly.

// CHECK-LABEL: func.func @sum_all
// CHECK:         %[[SUM:.*]] = linalg.generic
// CHECK-SAME:      iterator_types = ["reduction", "reduction"]
// CHECK-SAME:      outs(%{{.*}} : tensor<i32>)
// CHECK:           arith.addi
// CHECK-NOT:     tensor.expand_shape
// CHECK:         return %[[SUM]] : tensor<i32>
func.func @sum_all(%a: tensor<3x4xi32>) -> tensor<i32> {
  %0 = "pyfront.sum"(%a) {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xi32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

/// argmax carries (value, index) through one reduction; indices are i64 from
/// linalg.index of the reduced dim, and only the index tensor is returned.

// CHECK-LABEL: func.func @argmax
// CHECK:         %[[R:.*]]:2 = linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "reduction"]
// CHECK-SAME:      outs(%{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xi64>)
// CHECK:           %[[I:.*]] = linalg.index 1 : index
// CHECK:           arith.index_cast %[[I]] : index to i64
// CHECK:           arith.cmpf ogt
// CHECK:           linalg.yield %{{.*}}, %{{.*}} : f32, i64
// CHECK:         return %[[R]]#1 : tensor<3xi64>
func.func @argmax(%a: tensor<3x4xf32>) -> tensor<3xi64> {
  %0 = "pyfront.argmax"(%a) {axes = array<i64: 1>, keepdims = false} : (tensor<3x4xf32>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

/// A 2-D matmul is a linalg.matmul into a zero-filled init.

// CHECK-LABEL: func.func @matmul
// CHECK-SAME:    (%[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<4x5xf32>)
// CHECK:         %[[FILL:.*]] = linalg.fill
// CHECK:         %[[R:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<3x4xf32>, tensor<4x5xf32>) outs(%[[FILL]] : tensor<3x5xf32>)
// CHECK:         return %[[R]]
// CHECK-NOT:     linalg.batch_matmul
func.func @matmul(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = "pyfront.matmul"(%a, %b) : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

/// A matrix-vector product makes the vector a 4x1 matrix and drops the unit dim.

// CHECK-LABEL: func.func @matvec
// CHECK-SAME:    (%[[A:.*]]: tensor<3x4xf32>, %[[V:.*]]: tensor<4xf32>)
// CHECK:         %[[COL:.*]] = tensor.expand_shape %[[V]] {{\[}}[0, 1]] output_shape [4, 1]
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%[[A]], %[[COL]] : tensor<3x4xf32>, tensor<4x1xf32>)
// CHECK:         %[[R:.*]] = tensor.collapse_shape %[[MM]] {{\[}}[0, 1]] : tensor<3x1xf32> into tensor<3xf32>
// CHECK:         return %[[R]]
func.func @matvec(%a: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<3xf32> {
  %0 = "pyfront.matmul"(%a, %b) : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

/// A batched matmul broadcasts the unbatched operand, then uses batch_matmul.

// CHECK-LABEL: func.func @matmul_batched
// CHECK-SAME:    (%[[A:.*]]: tensor<2x3x4xf32>, %[[B:.*]]: tensor<4x5xf32>)
// CHECK:         %[[BB:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[B]] : tensor<4x5xf32>) outs(%{{.*}} : tensor<2x4x5xf32>)
// CHECK:         linalg.batch_matmul ins(%[[A]], %[[BB]] : tensor<2x3x4xf32>, tensor<2x4x5xf32>)
func.func @matmul_batched(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "pyfront.matmul"(%a, %b) : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

/// transpose, slice and concatenate map one-to-one onto linalg/tensor ops.

// CHECK-LABEL: func.func @shape_ops
// CHECK-SAME:    (%[[A:.*]]: tensor<2x3x4xf32>, %[[B:.*]]: tensor<5x6xf32>, %[[C:.*]]: tensor<2x3xi64>, %[[D:.*]]: tensor<2x5xi64>)
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[A]] : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<4x2x3xf32>) permutation = [2, 0, 1]
// CHECK:         %[[S:.*]] = tensor.extract_slice %[[B]][1, 0] [2, 3] [2, 2] : tensor<5x6xf32> to tensor<2x3xf32>
// CHECK:         %[[K:.*]] = tensor.concat dim(1) %[[C]], %[[D]] : (tensor<2x3xi64>, tensor<2x5xi64>) -> tensor<2x8xi64>
// CHECK:         return %[[T]], %[[S]], %[[K]]
func.func @shape_ops(%a: tensor<2x3x4xf32>, %b: tensor<5x6xf32>, %c: tensor<2x3xi64>, %d: tensor<2x5xi64>)
    -> (tensor<4x2x3xf32>, tensor<2x3xf32>, tensor<2x8xi64>) {
  %0 = "pyfront.transpose"(%a) {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %1 = "pyfront.slice"(%b) {offsets = array<i64: 1, 0>, sizes = array<i64: 2, 3>, strides = array<i64: 2, 2>} : (tensor<5x6xf32>) -> tensor<2x3xf32>
  %2 = "pyfront.concatenate"(%c, %d) {axis = 1 : i64} : (tensor<2x3xi64>, tensor<2x5xi64>) -> tensor<2x8xi64>
  return %0, %1, %2 : tensor<4x2x3xf32>, tensor<2x3xf32>, tensor<2x8xi64>
}

// -----

/// A reshape collapses to 1-D and expands to the new shape (C order).

// CHECK-LABEL: func.func @reshape
// CHECK-SAME:    (%[[A:.*]]: tensor<2x3x4xf32>)
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [6, 4] : tensor<24xf32> into tensor<6x4xf32>
// CHECK:         return %[[R]]
func.func @reshape(%a: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %0 = "pyfront.reshape"(%a) {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// -----

/// astype to bool is `!= 0` (unordered, so NaN is true); where selects and
/// broadcasts a 0-d branch with an empty indexing map.

// CHECK-DAG: #[[$SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @astype_where
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[COND:.*]] = linalg.generic
// CHECK:           arith.cmpf une, %{{.*}}, %[[ZERO]] : f32
// CHECK:         linalg.generic
// CHECK-SAME:      indexing_maps = [#{{.*}}, #{{.*}}, #[[$SCALAR]], #{{.*}}]
// CHECK-SAME:      ins(%[[COND]], %{{.*}}, %{{.*}} : tensor<4xi1>, tensor<4xf32>, tensor<f32>)
// CHECK:           arith.select
func.func @astype_where(%a: tensor<4xf32>, %b: tensor<f32>) -> tensor<4xf32> {
  %c = "pyfront.astype"(%a) {dtype = "bool"} : (tensor<4xf32>) -> tensor<4xi1>
  %0 = "pyfront.where"(%c, %a, %b) : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

/// A float32 sum accumulates in float64 (and the sum of magnitudes, to see
/// where NumPy's float32 partial sums could overflow), then rounds once: +inf
/// where the terms are finite but their magnitudes exceed half float32's max.
/// A float64 sum accumulates in its own type.

// CHECK-LABEL: func.func @float32_sum
// CHECK:         %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f64) outs(%{{.*}} : tensor<4xf64>)
// CHECK:         %[[ACC:.*]]:2 = linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "reduction"]
// CHECK-SAME:      outs(%[[ZERO]], %[[ZERO]] : tensor<4xf64>, tensor<4xf64>)
// CHECK:         ^bb0(%[[X:.*]]: f32, %[[T:.*]]: f64, %[[M:.*]]: f64):
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[X]] : f32 to f64
// CHECK-NEXT:      %[[T2:.*]] = arith.addf %[[T]], %[[W]] : f64
// CHECK-NEXT:      %[[A:.*]] = math.absf %[[W]] : f64
// CHECK-NEXT:      %[[M2:.*]] = arith.addf %[[M]], %[[A]] : f64
// CHECK-NEXT:      linalg.yield %[[T2]], %[[M2]] : f64, f64
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[ACC]]#0, %[[ACC]]#1 : tensor<4xf64>, tensor<4xf64>)
// CHECK:           arith.cmpf olt
// CHECK:           arith.cmpf ogt, %{{.*}}, %{{.*}} : f64
// CHECK:           arith.select
// CHECK:           arith.truncf %{{.*}} : f64 to f32
// CHECK:         } -> tensor<4xf32>
// CHECK-LABEL: func.func @float64_sum
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "reduction"]
// CHECK:           arith.addf %{{.*}}, %{{.*}} : f64
// CHECK-NOT:       arith.truncf
func.func @float32_sum(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = "pyfront.sum"(%a) {axes = array<i64: 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @float64_sum(%a: tensor<4x8xf64>) -> tensor<4xf64> {
  %0 = "pyfront.sum"(%a) {axes = array<i64: 1>, keepdims = false} : (tensor<4x8xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

/// A float32 row sum of 128 or more elements accumulates in 16 (or 8) lanes:
/// the row viewed as (64, 16), reduced over the 64 into 16 partial float64
/// sums per row, then those summed (IREE keeps a reduction one chain of
/// dependent additions: a 256x1024 row sum took ~230 us so: reduction.py).

// CHECK-DAG: #[[$ROWS_LANES:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$LANE:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @long_float32_rows_sum_in_lanes
// CHECK-NOT:     linalg.generic
// CHECK:         %[[SPLIT:.*]] = tensor.expand_shape {{.*}} output_shape [4, 64, 16] : tensor<4096xf32> into tensor<4x64x16xf32>
// CHECK:         %[[PARTIAL:.*]]:2 = linalg.generic {indexing_maps = [#[[$ROWS_LANES]], #[[$LANE]], #[[$LANE]]]
// CHECK-SAME:      iterator_types = ["parallel", "reduction", "parallel"]
// CHECK-SAME:      ins(%[[SPLIT]] : tensor<4x64x16xf32>) outs({{.*}} : tensor<4x16xf64>, tensor<4x16xf64>)
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "reduction"]
// CHECK-SAME:      ins(%[[PARTIAL]]#0, %[[PARTIAL]]#1 : tensor<4x16xf64>, tensor<4x16xf64>) outs({{.*}} : tensor<4xf64>, tensor<4xf64>)
// CHECK:           arith.truncf %{{.*}} : f64 to f32
func.func @long_float32_rows_sum_in_lanes(%a: tensor<4x1024xf32>) -> tensor<4xf32> {
  %0 = "pyfront.sum"(%a) {axes = array<i64: 1>, keepdims = false} : (tensor<4x1024xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

/// float32 sin reduces its argument in float64 (k = floor(x * 2/pi + 0.5),
/// three parts of pi/2), sums Taylor series in float64, and rounds once; past
/// 2**22 (or for NaN/inf) it yields NaN, which guard-fp-events reports.
/// +-0 is returned as is (NumPy's sign of zero).

// CHECK-LABEL: func.func @float32_sin
// CHECK:         ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[W:.*]] = arith.extf %[[X]] : f32 to f64
// CHECK:           math.floor %{{.*}} : f64
// CHECK-COUNT-3:   arith.subf %{{.*}}, %{{.*}} : f64
// CHECK:           arith.cmpf olt, %{{.*}}, %{{.*}} : f64
// CHECK:           %[[V:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK:           arith.select %{{.*}}, %[[X]], %[[V]] : f32
// CHECK-NOT:       math.sin
func.func @float32_sin(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "pyfront.sin"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

/// Ops outside the pyfront dialect are left alone.

// CHECK-LABEL: func.func @not_pyfront
// CHECK:         %[[R:.*]] = arith.addf %{{.*}}, %{{.*}} : tensor<4xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[R]]
func.func @not_pyfront(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

/// The lowered ops carry the pyfront op's location, so later diagnostics still
/// name the user's Python line.

// LOC-DAG: #[[$PY:.*]] = loc("model.py":7:3)
// LOC-LABEL: func.func @keeps_location
// LOC:         %{{.*}} = tensor.empty() : tensor<4xf32> loc(#[[$PY]])
// LOC:         math.exp %{{.*}} : f32 loc(#[[$PY]])
// LOC:         } -> tensor<4xf32> loc(#[[$PY]])
// LOC-NOT:     pyfront.exp
func.func @keeps_location(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "pyfront.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":7:3)
  return %0 : tensor<4xf32>
}

// -----

/// A shape guard's size is computed from the function's arguments: the add
/// pairs the dynamic %flat with a static 4, so canonicalize makes the producer
/// of %flat static; a `tensor.dim` of %flat itself would fold to 4 and the
/// guard would hold for x of shape (3, 2) (pyfront issue 16, item 4).

// CANON-LABEL: func.func @guard_size_from_arguments
// CANON-SAME:    (%[[X:.*]]: tensor<?x?xf64>, %[[Y:.*]]: tensor<4xf64>)
// CANON-DAG:     %[[D0:.*]] = tensor.dim %[[X]], %c0 : tensor<?x?xf64>
// CANON-DAG:     %[[D1:.*]] = tensor.dim %[[X]], %c1 : tensor<?x?xf64>
// CANON:         %[[N:.*]] = affine.apply #{{.*}}()[%[[D0]], %[[D1]]]
// CANON:         %[[OK:.*]] = arith.cmpi eq, %[[N]], %c4 : index
// CANON:         return %{{.*}}, %[[OK]] : tensor<4xf64>, i1
func.func @guard_size_from_arguments(%x: tensor<?x?xf64>, %y: tensor<4xf64>) -> (tensor<4xf64>, i1) {
  %flat = "pyfront.reshape"(%x) {shape = array<i64: -1>} : (tensor<?x?xf64>) -> tensor<?xf64>
  %two = arith.constant dense<2.0> : tensor<f64>
  %scaled = "pyfront.multiply"(%flat, %two) : (tensor<?xf64>, tensor<f64>) -> tensor<?xf64>
  %sum = "pyfront.add"(%scaled, %y) : (tensor<?xf64>, tensor<4xf64>) -> tensor<4xf64>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %scaled, %c0 : tensor<?xf64>
  %c4 = arith.constant 4 : index
  %ok = arith.cmpi eq, %n, %c4 : index
  return %sum, %ok : tensor<4xf64>, i1
}

// -----

/// A float32 op marked `pyfront.exact_subnormals` (guard-subnormal-inputs)
/// reads its operands as float64 through their bits (a subnormal is its
/// mantissa times 2**-149), computes in float64 and rounds to float32 in
/// software below the smallest normal (the rounded count of 2**-149, with
/// the sign bit), with `arith.truncf` elsewhere.

// CHECK-LABEL: func.func @exact_multiply
// CHECK:         linalg.generic
// CHECK:         ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[XBITS:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK:           arith.sitofp %{{.*}} : i32 to f64
// CHECK:           arith.extf %[[X]] : f32 to f64
// CHECK:           %[[WIDE:.*]] = arith.mulf %{{.*}}, %{{.*}} : f64
// CHECK:           math.roundeven %{{.*}} : f64
// CHECK:           %[[UNITS:.*]] = arith.fptosi %{{.*}} : f64 to i32
// CHECK:           %[[SUB:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK:           %[[NORMAL:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK:           %[[R:.*]] = arith.select %{{.*}}, %[[SUB]], %[[NORMAL]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
func.func @exact_multiply(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "pyfront.multiply"(%a, %b) {pyfront.exact_subnormals} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

/// A convolution is a matmul of the weight (O, C*KH*KW) and the padded input's
/// windows gathered into a (C*KH*KW, N*OH*OW) matrix, transposed back to NCHW
/// (IREE 3.13 ran small linalg.conv_2d_nchw_fchw at 1-2 GFLOP/s: nn.py).

// CHECK-DAG: #[[$WINDOWS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d0, d1 + d4, d2 + d5)>
// CHECK-DAG: #[[$SWAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>
// CHECK-LABEL: func.func @conv2d_is_a_matmul
// CHECK:         %[[PADDED:.*]] = tensor.insert_slice %{{.*}}[0, 0, 1, 1] [2, 3, 8, 8]
// CHECK:         linalg.generic {indexing_maps = [#[[$WINDOWS]], {{.*}}ins(%[[PADDED]] {{.*}} outs(%{{.*}} : tensor<3x3x3x2x8x8xf32>)
// CHECK:         %[[OUT:.*]] = linalg.matmul ins({{.*}} : tensor<4x27xf32>, tensor<27x128xf32>)
// CHECK:         %[[BY_CHANNEL:.*]] = tensor.expand_shape {{.*}} output_shape [4, 2, 8, 8]
// CHECK:         linalg.generic {indexing_maps = [#[[$SWAP]], {{.*}}ins(%[[BY_CHANNEL]] {{.*}} outs(%{{.*}} : tensor<2x4x8x8xf32>)
// CHECK-NOT:     linalg.conv_2d
func.func @conv2d_is_a_matmul(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32> {
  %0 = "pyfront.conv2d"(%x, %w) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1>}
      : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}

// -----

/// Max pooling windows that tile the image (stride == kernel, no padding): the
/// gradient is computed over the tiles (N, C, OH, KH, OW, KW), no index is
/// computed or gathered; the row past the last window gets zeros.

// CHECK-DAG: #[[$TILE:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4, d3, d5)>
// CHECK-DAG: #[[$WINDOW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4)>
// CHECK-LABEL: func.func @tiled_max_pool_grad
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 0, 0] [2, 3, 4, 4]
// CHECK:         %[[FIRST:.*]]:2 = linalg.generic {indexing_maps = [#[[$TILE]],
// CHECK-SAME:      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK:         linalg.generic {indexing_maps = [#[[$WINDOW]], #[[$WINDOW]],
// CHECK-SAME:      ins(%[[FIRST]]#1, %{{.*}} : tensor<2x3x2x2xi64>, tensor<2x3x2x2xf32>)
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [2, 3, 4, 4]
// CHECK-NOT:     tensor.extract %
func.func @tiled_max_pool_grad(%x: tensor<2x3x5x4xf32>, %ct: tensor<2x3x2x2xf32>) -> tensor<2x3x5x4xf32> {
  %0 = "pyfront.max_pool2d_grad"(%x, %ct)
      {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0>}
      : (tensor<2x3x5x4xf32>, tensor<2x3x2x2xf32>) -> tensor<2x3x5x4xf32>
  return %0 : tensor<2x3x5x4xf32>
}
