// RUN: pyfront-opt %s --split-input-file --lower-to-linalg --bound-dispatch-inputs | filecheck %s

/// `sum(xs)` over 18 arrays: IREE would fuse the 17 adds into one dispatch
/// reading 18 tensors. After the 16th array the running sum goes through an
/// optimization barrier, so no fused chain reads more than 16.

// CHECK-LABEL: func.func @long_sum
// CHECK-COUNT-15: linalg.generic
// CHECK:         %[[CUT:.*]] = util.optimization_barrier %{{.*}} : tensor<4xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[CUT]], %{{.*}} : tensor<4xf32>, tensor<4xf32>)
// CHECK-NOT:     util.optimization_barrier
func.func @long_sum(%a0: tensor<4xf32>, %a1: tensor<4xf32>, %a2: tensor<4xf32>, %a3: tensor<4xf32>, %a4: tensor<4xf32>, %a5: tensor<4xf32>, %a6: tensor<4xf32>, %a7: tensor<4xf32>, %a8: tensor<4xf32>, %a9: tensor<4xf32>, %a10: tensor<4xf32>, %a11: tensor<4xf32>, %a12: tensor<4xf32>, %a13: tensor<4xf32>, %a14: tensor<4xf32>, %a15: tensor<4xf32>, %a16: tensor<4xf32>, %a17: tensor<4xf32>) -> tensor<4xf32> {
  %s1 = "pyfront.add"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s2 = "pyfront.add"(%s1, %a2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s3 = "pyfront.add"(%s2, %a3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s4 = "pyfront.add"(%s3, %a4) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s5 = "pyfront.add"(%s4, %a5) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s6 = "pyfront.add"(%s5, %a6) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s7 = "pyfront.add"(%s6, %a7) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s8 = "pyfront.add"(%s7, %a8) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s9 = "pyfront.add"(%s8, %a9) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s10 = "pyfront.add"(%s9, %a10) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s11 = "pyfront.add"(%s10, %a11) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s12 = "pyfront.add"(%s11, %a12) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s13 = "pyfront.add"(%s12, %a13) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s14 = "pyfront.add"(%s13, %a14) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s15 = "pyfront.add"(%s14, %a15) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s16 = "pyfront.add"(%s15, %a16) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s17 = "pyfront.add"(%s16, %a17) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %s17 : tensor<4xf32>
}

// -----

/// A chain over three arrays is left as it is.

// CHECK-LABEL: func.func @short_sum
// CHECK-NOT:     util.optimization_barrier
func.func @short_sum(%a0: tensor<4xf32>, %a1: tensor<4xf32>, %a2: tensor<4xf32>) -> tensor<4xf32> {
  %s1 = "pyfront.add"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s2 = "pyfront.add"(%s1, %a2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %s2 : tensor<4xf32>
}

// -----

/// 15 unrelated 0-d ops, each reading an argument and returned: IREE would
/// make them one dispatch of 30 buffers. After 14 (28 buffers) the group is
/// cut: each of its values that a later op uses (here the return) goes
/// through a barrier placed before the 15th op.

// CHECK-LABEL: func.func @unrelated_scalars
// CHECK-COUNT-14: linalg.generic
// CHECK-COUNT-14: util.optimization_barrier
// CHECK:         linalg.generic
// CHECK-NOT:     util.optimization_barrier
// CHECK:         return
func.func @unrelated_scalars(%a0: tensor<f32>, %a1: tensor<f32>, %a2: tensor<f32>, %a3: tensor<f32>, %a4: tensor<f32>, %a5: tensor<f32>, %a6: tensor<f32>, %a7: tensor<f32>, %a8: tensor<f32>, %a9: tensor<f32>, %a10: tensor<f32>, %a11: tensor<f32>, %a12: tensor<f32>, %a13: tensor<f32>, %a14: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %r0 = "pyfront.negative"(%a0) : (tensor<f32>) -> tensor<f32>
  %r1 = "pyfront.negative"(%a1) : (tensor<f32>) -> tensor<f32>
  %r2 = "pyfront.negative"(%a2) : (tensor<f32>) -> tensor<f32>
  %r3 = "pyfront.negative"(%a3) : (tensor<f32>) -> tensor<f32>
  %r4 = "pyfront.negative"(%a4) : (tensor<f32>) -> tensor<f32>
  %r5 = "pyfront.negative"(%a5) : (tensor<f32>) -> tensor<f32>
  %r6 = "pyfront.negative"(%a6) : (tensor<f32>) -> tensor<f32>
  %r7 = "pyfront.negative"(%a7) : (tensor<f32>) -> tensor<f32>
  %r8 = "pyfront.negative"(%a8) : (tensor<f32>) -> tensor<f32>
  %r9 = "pyfront.negative"(%a9) : (tensor<f32>) -> tensor<f32>
  %r10 = "pyfront.negative"(%a10) : (tensor<f32>) -> tensor<f32>
  %r11 = "pyfront.negative"(%a11) : (tensor<f32>) -> tensor<f32>
  %r12 = "pyfront.negative"(%a12) : (tensor<f32>) -> tensor<f32>
  %r13 = "pyfront.negative"(%a13) : (tensor<f32>) -> tensor<f32>
  %r14 = "pyfront.negative"(%a14) : (tensor<f32>) -> tensor<f32>
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11, %r12, %r13, %r14 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

/// The same group, one of whose values a branch after the cut reads: the
/// use inside the scf.if reads it through the barrier too.

// CHECK-LABEL: func.func @used_in_a_branch
// CHECK:         %[[R0:.*]] = util.optimization_barrier
// CHECK:         scf.if
// CHECK-NEXT:      scf.yield %[[R0]]
func.func @used_in_a_branch(%c: i1, %a0: tensor<f32>, %a1: tensor<f32>, %a2: tensor<f32>, %a3: tensor<f32>, %a4: tensor<f32>, %a5: tensor<f32>, %a6: tensor<f32>, %a7: tensor<f32>, %a8: tensor<f32>, %a9: tensor<f32>, %a10: tensor<f32>, %a11: tensor<f32>, %a12: tensor<f32>, %a13: tensor<f32>, %a14: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %r0 = "pyfront.negative"(%a0) : (tensor<f32>) -> tensor<f32>
  %r1 = "pyfront.negative"(%a1) : (tensor<f32>) -> tensor<f32>
  %r2 = "pyfront.negative"(%a2) : (tensor<f32>) -> tensor<f32>
  %r3 = "pyfront.negative"(%a3) : (tensor<f32>) -> tensor<f32>
  %r4 = "pyfront.negative"(%a4) : (tensor<f32>) -> tensor<f32>
  %r5 = "pyfront.negative"(%a5) : (tensor<f32>) -> tensor<f32>
  %r6 = "pyfront.negative"(%a6) : (tensor<f32>) -> tensor<f32>
  %r7 = "pyfront.negative"(%a7) : (tensor<f32>) -> tensor<f32>
  %r8 = "pyfront.negative"(%a8) : (tensor<f32>) -> tensor<f32>
  %r9 = "pyfront.negative"(%a9) : (tensor<f32>) -> tensor<f32>
  %r10 = "pyfront.negative"(%a10) : (tensor<f32>) -> tensor<f32>
  %r11 = "pyfront.negative"(%a11) : (tensor<f32>) -> tensor<f32>
  %r12 = "pyfront.negative"(%a12) : (tensor<f32>) -> tensor<f32>
  %r13 = "pyfront.negative"(%a13) : (tensor<f32>) -> tensor<f32>
  %r14 = "pyfront.negative"(%a14) : (tensor<f32>) -> tensor<f32>
  %s = scf.if %c -> (tensor<f32>) {
    scf.yield %r0 : tensor<f32>
  } else {
    scf.yield %r1 : tensor<f32>
  }
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11, %r12, %r13, %r14, %s : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}
