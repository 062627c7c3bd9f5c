// RUN: pyfront-opt %s --split-input-file --lower-to-linalg | filecheck %s

/// Unsigned dtypes are `ui` types in the pyfront dialect: the lowering picks the
/// unsigned ops (divui behind a zero-divisor select), then erases signedness
/// (passes/signless.py). The public signature keeps `ui8`; IREE's
/// flow.tensor.bitcast relabels at entry and before the return.

// CHECK-LABEL: func.func @floor_divide_u8
// CHECK-SAME:    (%[[A:.*]]: tensor<4xui8>, %[[B:.*]]: tensor<4xui8>) -> tensor<4xui8>
// CHECK-DAG:     %[[SB:.*]] = flow.tensor.bitcast %[[B]] : tensor<4xui8> -> tensor<4xi8>
// CHECK-DAG:     %[[SA:.*]] = flow.tensor.bitcast %[[A]] : tensor<4xui8> -> tensor<4xi8>
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[SA]], %[[SB]] : tensor<4xi8>, tensor<4xi8>)
// CHECK:         ^bb0(%[[X:.*]]: i8, %[[Y:.*]]: i8, %{{.*}}: i8):
// CHECK:           %[[Q:.*]] = arith.divui %[[X]], %{{.*}} : i8
// CHECK:         %[[OUT:.*]] = flow.tensor.bitcast %[[R]] : tensor<4xi8> -> tensor<4xui8>
// CHECK:         return %[[OUT]] : tensor<4xui8>
// CHECK-NOT:     ui8
func.func @floor_divide_u8(%a: tensor<4xui8>, %b: tensor<4xui8>) -> tensor<4xui8> {
  %0 = "pyfront.floor_divide"(%a, %b) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

/// Comparisons, maximum and widening casts of unsigned values are unsigned;
/// a uint8 constant (built as a signless one bitcast to ui8) is signless again.

// CHECK-LABEL: func.func @unsigned_ops
// CHECK:         arith.constant dense<-56> : tensor<4xi8>
// CHECK:         arith.cmpi ult
// CHECK:         arith.maxui
// CHECK:         arith.uitofp %{{.*}} : i8 to f32
// CHECK:         arith.extui %{{.*}} : i8 to i64
// CHECK-NOT:     {{ tensor\.bitcast}}
func.func @unsigned_ops(%a: tensor<4xui8>) -> (tensor<4xi1>, tensor<4xui8>, tensor<4xf32>, tensor<4xi64>) {
  %c0 = arith.constant dense<-56> : tensor<4xi8>
  %c = tensor.bitcast %c0 : tensor<4xi8> to tensor<4xui8>
  %0 = "pyfront.less"(%a, %c) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %1 = "pyfront.maximum"(%a, %c) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %2 = "pyfront.astype"(%a) {dtype = "float32"} : (tensor<4xui8>) -> tensor<4xf32>
  %3 = "pyfront.astype"(%a) {dtype = "int64"} : (tensor<4xui8>) -> tensor<4xi64>
  return %0, %1, %2, %3 : tensor<4xi1>, tensor<4xui8>, tensor<4xf32>, tensor<4xi64>
}

// -----

/// float16 arithmetic runs NumPy's half loop: widen to f32, compute, round back.

// CHECK-LABEL: func.func @add_f16
// CHECK:         ^bb0(%[[X:.*]]: f16, %[[Y:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[WX:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK-NEXT:      %[[WY:.*]] = arith.extf %[[Y]] : f16 to f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[WX]], %[[WY]] : f32
// CHECK:           arith.truncf %{{.*}} : f32 to f16
func.func @add_f16(%a: tensor<4xf16>, %b: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "pyfront.add"(%a, %b) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

/// A dynamic-size unsigned argument: the bitcast carries its size, read from
/// the argument itself (not from the bitcast, which it would then precede).

// CHECK-LABEL: func.func @dynamic_u8
// CHECK-SAME:    (%[[A:.*]]: tensor<?xui8>) -> tensor<?xui8>
// CHECK:         %[[N:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<?xui8>
// CHECK:         %[[S:.*]] = flow.tensor.bitcast %[[A]] : tensor<?xui8>{%[[N]]} -> tensor<?xi8>{%[[N]]}
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[S]], %[[S]] : tensor<?xi8>, tensor<?xi8>)
// CHECK:           arith.remui
func.func @dynamic_u8(%a: tensor<?xui8>) -> tensor<?xui8> {
  %0 = "pyfront.remainder"(%a, %a) : (tensor<?xui8>, tensor<?xui8>) -> tensor<?xui8>
  return %0 : tensor<?xui8>
}
