// A sum-style reduction whose body does not read the input element: out + 2 per element.
// Expected: 2 * 5 = 10 for any input. IREE 3.13 (llvm-cpu) returns 6.
func.func @f(%arg0: tensor<5xi64>) -> tensor<i64> {
  %c0 = arith.constant 0 : i64
  %c2 = arith.constant 2 : i64
  %init = tensor.empty() : tensor<i64>
  %acc = linalg.fill ins(%c0 : i64) outs(%init : tensor<i64>) -> tensor<i64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%arg0 : tensor<5xi64>) outs(%acc : tensor<i64>) {
  ^bb0(%in: i64, %out: i64):
    %s = arith.addi %out, %c2 : i64
    linalg.yield %s : i64
  } -> tensor<i64>
  return %r : tensor<i64>
}
