// The last case is refused, so pyfront-opt exits nonzero (`not`) after printing the others.
// RUN: not pyfront-opt %s --split-input-file --guard-subnormal-inputs | filecheck %s
// RUN: not pyfront-opt %s --split-input-file --guard-subnormal-inputs 2>&1 | filecheck %s --check-prefix=ERR

/// A float argument that an op reads is guarded to hold no subnormal: per
/// element zero or |x| >= the smallest normal (UGE: NaN passes), as i8
/// flags whose min one reduction generic takes (one dispatch), cast to bool.
/// A small argument is a row of a table reduced row by row
/// (passes/pooled_checks.py; one row here). An int argument, and a float
/// argument only returned, are not checked.

// CHECK-LABEL: func.func @reads_float
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf64>, %[[N:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[ROW:.*]] = "pyfront.reshape"(%[[X]]) {shape = array<i64: 1, 4>}
// CHECK:         %[[ONE:.*]] = linalg.fill ins(%{{.*}} : i8) outs(%{{.*}} : tensor<1xi8>)
// CHECK:         %[[LEAST:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[ROW]] : tensor<1x4xf64>) outs(%[[ONE]] : tensor<1xi8>)
// CHECK:           arith.cmpf oeq
// CHECK:           math.absf
// CHECK:           arith.cmpf uge, %{{.*}}, %{{.*}} : f64
// CHECK:           arith.minsi
// CHECK:         %[[FIRST:.*]] = "pyfront.slice"(%[[LEAST]])
// CHECK-NEXT:    %[[FLAG:.*]] = "pyfront.reshape"(%[[FIRST]]) {shape = array<i64>}
// CHECK-NEXT:    %[[OK:.*]] = "pyfront.astype"(%[[FLAG]]) {dtype = "bool"}
// CHECK-NEXT:    "pyfront.guard"(%[[OK]]) {kind = "value", reason = "no subnormal float in arg0 (IREE's CPU code reads subnormals as zero)"
// CHECK-NOT:     "pyfront.guard"
// CHECK:         "pyfront.exp"(%[[X]])
// CHECK:         return
func.func @reads_float(%x: tensor<4xf64>, %n: tensor<4xi32>, %y: tensor<4xf32>) -> (tensor<4xf64>, tensor<4xi32>, tensor<4xf32>) {
  %e = "pyfront.exp"(%x) : (tensor<4xf64>) -> tensor<4xf64>
  %m = "pyfront.negative"(%n) : (tensor<4xi32>) -> tensor<4xi32>
  return %e, %m, %y : tensor<4xf64>, tensor<4xi32>, tensor<4xf32>
}

// -----

/// A 0-d float (a Python float passed at run time) needs no reduction.

// CHECK-LABEL: func.func @scalar
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<1x1xf64>) outs(%{{.*}} : tensor<1xi8>)
// CHECK:           arith.cmpf
// CHECK:         %[[OK:.*]] = "pyfront.astype"
// CHECK-NEXT:    "pyfront.guard"(%[[OK]]) {kind = "value"
func.func @scalar(%s: tensor<f64>) -> tensor<f64> {
  %e = "pyfront.exp"(%s) : (tensor<f64>) -> tensor<f64>
  return %e : tensor<f64>
}

// -----

/// Arguments of one static shape and dtype are checked together; their guard
/// names all of their paths. Small groups are rows of one table per dtype,
/// of 0.0 where they do not fill it (not subnormal): one reduction for the float32 groups of
/// shapes 2x3 and 3, one for the float64 one. Each argument of a dynamic
/// shape gets its own check (two `?` dims may differ at run time).

// CHECK-LABEL: func.func @grouped
// CHECK-SAME:    (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x3xf64>, %[[C:.*]]: tensor<3xf32>, %[[D:.*]]: tensor<?xf32>, %[[E:.*]]: tensor<?xf32>)
// CHECK:         %[[ROWA:.*]] = "pyfront.reshape"(%[[A]]) {shape = array<i64: 1, 6>}
// CHECK-NEXT:    %[[ROWC:.*]] = "pyfront.reshape"(%[[C]]) {shape = array<i64: 1, 3>}
// CHECK-NEXT:    %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : tensor<2x6xf32>
// CHECK-NEXT:    %[[WITHA:.*]] = "pyfront.update_slice"(%[[ZEROS]], %[[ROWA]]) {offsets = array<i64: 0, 0>
// CHECK-NEXT:    %[[F32:.*]] = "pyfront.update_slice"(%[[WITHA]], %[[ROWC]]) {offsets = array<i64: 1, 0>
// CHECK:         linalg.generic {{.*}} ins(%[[F32]] : tensor<2x6xf32>) outs(%{{.*}} : tensor<2xi8>)
// CHECK:           arith.cmpf uge, %{{.*}}, %{{.*}} : f32
// CHECK:         %[[ROWB:.*]] = "pyfront.reshape"(%[[B]]) {shape = array<i64: 1, 6>}
// CHECK:         linalg.generic {{.*}} ins(%[[ROWB]] : tensor<1x6xf64>) outs(%{{.*}} : tensor<1xi8>)
// CHECK:           arith.cmpf uge, %{{.*}}, %{{.*}} : f64
// CHECK:         linalg.generic {{.*}} ins(%[[D]] : tensor<?xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[E]] : tensor<?xf32>)
// CHECK:         "pyfront.guard"({{.*}}) {kind = "value", reason = "no subnormal float in arg0 (
// CHECK-NEXT:    "pyfront.guard"({{.*}}) {kind = "value", reason = "no subnormal float in arg1 (
// CHECK-NEXT:    "pyfront.guard"({{.*}}) {kind = "value", reason = "no subnormal float in arg2 (
// CHECK-NEXT:    "pyfront.guard"({{.*}}) {kind = "value", reason = "no subnormal float in arg3 (
// CHECK-NEXT:    "pyfront.guard"({{.*}}) {kind = "value", reason = "no subnormal float in arg4 (
func.func @grouped(%a: tensor<2x3xf32>, %b: tensor<2x3xf64>, %c: tensor<3xf32>, %d: tensor<?xf32>, %e: tensor<?xf32>)
    -> (tensor<2x3xf32>, tensor<2x3xf64>, tensor<3xf32>, tensor<?xf32>, tensor<?xf32>) {
  %ea = "pyfront.exp"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %eb = "pyfront.exp"(%b) : (tensor<2x3xf64>) -> tensor<2x3xf64>
  %ec = "pyfront.exp"(%c) : (tensor<3xf32>) -> tensor<3xf32>
  %ed = "pyfront.exp"(%d) : (tensor<?xf32>) -> tensor<?xf32>
  %ee = "pyfront.exp"(%e) : (tensor<?xf32>) -> tensor<?xf32>
  return %ea, %eb, %ec, %ed, %ee : tensor<2x3xf32>, tensor<2x3xf64>, tensor<3xf32>, tensor<?xf32>, tensor<?xf32>
}

// -----

/// Small float32 values (at most 16 elements) are computed exactly instead:
/// the elementwise ops `_exactly_in_float64` computes as NumPy does get
/// `pyfront.exact_subnormals`, and a value only they, the return or a check
/// for NaN and infinity read needs no guard. An op of 64 elements reading
/// one guards it: an argument at the entry, results at the end (one check
/// per static shape, as for arguments).

// CHECK-LABEL: func.func @small_float32
// CHECK-SAME:    (%[[P:.*]]: tensor<1xf32>, %[[M:.*]]: tensor<64xf32>)
// CHECK:         "pyfront.guard"({{.*}}) {kind = "value", reason = "no subnormal float in arg1 (
// CHECK-NOT:     "pyfront.guard"
// CHECK:         %[[NEXT:.*]] = "pyfront.multiply"(%[[P]], %{{.*}}) {pyfront.exact_subnormals}
// CHECK-NOT:     "pyfront.guard"
// CHECK:         %[[C:.*]] = "pyfront.subtract"(%{{.*}}, %[[NEXT]]) {pyfront.exact_subnormals}
// CHECK-NOT:     "pyfront.guard"
// CHECK:         %[[STEP:.*]] = "pyfront.true_divide"(%{{.*}}, %[[C]]) {pyfront.exact_subnormals}
// CHECK-NOT:     "pyfront.guard"
// CHECK:         %[[FINITE:.*]] = linalg.generic {{.*}} ins(%[[NEXT]] : tensor<1xf32>)
// CHECK-NOT:     "pyfront.guard"
// CHECK:         "pyfront.multiply"(%[[M]], %[[STEP]]) : (tensor<64xf32>, tensor<1xf32>)
// CHECK:         "pyfront.reshape"(%[[STEP]]) {shape = array<i64: 1, 1>}
// CHECK:         "pyfront.guard"({{.*}}) {kind = "value", reason = "no subnormal float in the result of pyfront.true_divide at m.py:3:4 (
// CHECK-NEXT:    return
#every = affine_map<(d0) -> (d0)>
#none = affine_map<(d0) -> ()>
func.func @small_float32(%p: tensor<1xf32>, %m: tensor<64xf32>) -> (tensor<1xf32>, tensor<64xf32>, tensor<i8>) {
  %b1 = arith.constant dense<0.9> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %next = "pyfront.multiply"(%p, %b1) : (tensor<1xf32>, tensor<f32>) -> tensor<1xf32> loc("m.py":1:4)
  %c = "pyfront.subtract"(%one, %next) : (tensor<f32>, tensor<1xf32>) -> tensor<1xf32> loc("m.py":2:4)
  %step = "pyfront.true_divide"(%one, %c) : (tensor<f32>, tensor<1xf32>) -> tensor<1xf32> loc("m.py":3:4)
  %init = tensor.empty() : tensor<i8>
  %finite = linalg.generic {indexing_maps = [#every, #none], iterator_types = ["reduction"]}
      ins(%next : tensor<1xf32>) outs(%init : tensor<i8>) {
  ^bb0(%x: f32, %acc: i8):
    %inf = arith.constant 0x7F800000 : f32
    %abs = math.absf %x : f32
    %ok = arith.cmpf olt, %abs, %inf : f32
    %flag = arith.extui %ok : i1 to i8
    %min = arith.minsi %acc, %flag : i8
    linalg.yield %min : i8
  } -> tensor<i8>
  %update = "pyfront.multiply"(%m, %step) : (tensor<64xf32>, tensor<1xf32>) -> tensor<64xf32>
  return %next, %update, %finite : tensor<1xf32>, tensor<64xf32>, tensor<i8>
}

// -----

/// A reader that tells a subnormal from zero (here a comparison with 0.0)
/// guards the value; so does an op the exact lowering does not cover (exp).

// CHECK-LABEL: func.func @exposed
// CHECK:         "pyfront.guard"({{.*}}) {kind = "value", reason = "no subnormal float in arg0, arg1 (
// CHECK-NOT:     "pyfront.guard"
// CHECK:         return
#every = affine_map<(d0) -> (d0)>
func.func @exposed(%s: tensor<2xf32>, %t: tensor<2xf32>) -> (tensor<2xi8>, tensor<2xf32>) {
  %init = tensor.empty() : tensor<2xi8>
  %nonzero = linalg.generic {indexing_maps = [#every, #every], iterator_types = ["parallel"]}
      ins(%s : tensor<2xf32>) outs(%init : tensor<2xi8>) {
  ^bb0(%x: f32, %out: i8):
    %zero = arith.constant 0.0 : f32
    %ne = arith.cmpf une, %x, %zero : f32
    %flag = arith.extui %ne : i1 to i8
    linalg.yield %flag : i8
  } -> tensor<2xi8>
  %e = "pyfront.exp"(%t) : (tensor<2xf32>) -> tensor<2xf32>
  return %nonzero, %e : tensor<2xi8>, tensor<2xf32>
}

// -----

/// A float constant holding a subnormal is refused, naming its site.

// ERR: a float constant holds a subnormal value, which IREE's CPU code reads as zero (at m.py:2:4)
func.func @subnormal_constant(%x: tensor<2xf64>) -> tensor<2xf64> {
  %c = arith.constant dense<[1.0, 4.9406564584124654E-324]> : tensor<2xf64> loc("m.py":2:4)
  %p = "pyfront.multiply"(%x, %c) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  return %p : tensor<2xf64>
}
