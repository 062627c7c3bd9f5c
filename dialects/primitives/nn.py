"""DL primitives NumPy lacks: 2-D convolution, pooling, embedding lookup, and their gradients.

Layouts: images are NCHW, convolution weights OIHW (out channels, in channels,
kernel height, kernel width). `strides`, `padding` and `kernel` are (h, w)
pairs; padding is symmetric. Every gradient is a primitive of its own, so the
VJP rules below are written with `bind.apply` and differentiate again.

Assumptions (checked by the shape rules):
- only the batch dim (and an embedding's index dims) may be dynamic; channel,
  spatial and table dims are static, as the gradients need them as params;
- padding is smaller than the kernel in each direction (the input gradient
  pads the cotangent by `kernel - 1 - padding`);
- operands are float32 or float64, and agree (embedding indices: int32/int64).

Semantics fixed here, shared by the NumPy impls and the lowerings:
- `max_pool2d` pads with -inf; a window's max propagates NaN (np.max).
- `max_pool2d_grad` sends each window's cotangent to the window's *first*
  maximum in row-major (kh, kw) order; a NaN counts as the maximum and the
  first NaN wins (np.argmax). Overlapping windows add up.
- `avg_pool2d` pads with zeros and always divides by kh * kw (padding counts).
- `embedding` rows are `table[indices]`; a negative index counts from the end.
  An index out of range raises IndexError in the impl; the lowering clamps it
  (memory safety only: the front end guards the range, see numpy_api.py).

Lowerings: a convolution and its filter gradient are `linalg.matmul`s of the
input's windows gathered into a matrix (im2col, `_correlate`); the input
gradient is a `linalg.conv_2d_nchw_fchw`, pooling `linalg.pooling_nchw_max`/
`_sum`, all on inputs padded by inserting them into a filled tensor
(`_spread`, which also dilates a cotangent by the stride); the max-pool argmax
and its scatter, and the embedding gather/scatter are `linalg.generic`s. Pooling
gradients of windows that tile the image (`_tiles`) are maps over the tiles.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from pyfront.dialects.mlir import arith, ir, linalg, tensor
from pyfront.dialects.opdef import Attr
from pyfront.dialects.primitives import bind, emit
from pyfront.dialects.primitives.base import fp_events, primitive, same_dtype, unify_dims
from pyfront.dialects.types import element_type, shape_of, tensor_dtype, tensor_type

STRIDES = Attr("strides", "i64s", "(sh, sw) window step")
PADDING = Attr("padding", "i64s", "(ph, pw) on both sides of each spatial dim")
KERNEL = Attr("kernel", "i64s", "(kh, kw) window size")
INPUT_HW = Attr("input_hw", "i64s", "(h, w) of the forward input")
NUM_ROWS = Attr("num_rows", "int", "rows of the embedding table")
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))
I64 = np.dtype(np.int64)


# Rules -------------------------------------------------------------------------


def _floats_agree(*dtypes, **_) -> str | None:
    if any(d not in FLOATS for d in dtypes):
        return f"operands must be float32 or float64, got {', '.join(map(str, dtypes))}"
    return None if len(set(dtypes)) == 1 else f"operand dtypes differ: {', '.join(map(str, dtypes))}"


def _check_window(kernel, strides, padding) -> None:
    for k, s, p in zip(kernel, strides, padding):
        if s < 1 or k < 1 or p < 0:
            raise ValueError(f"kernel {tuple(kernel)} and strides {tuple(strides)} must be positive, "
                             f"padding {tuple(padding)} non-negative")
        if p >= k:
            raise ValueError(f"padding {tuple(padding)} must be smaller than the kernel {tuple(kernel)}")


def _image(shape, what: str, batch_dynamic: bool = True):
    if len(shape) != 4:
        raise ValueError(f"{what} must be 4-D (NCHW), got shape {tuple(shape)}")
    if None in shape[1:] or (not batch_dynamic and shape[0] is None):
        raise ValueError(f"{what}: only the batch dim may vary between calls, got {tuple(shape)}")
    return shape


def _window_out(hw, kernel, strides, padding) -> tuple[int, int]:
    """Output (oh, ow) of sliding `kernel` over `hw` padded by `padding` with `strides`."""
    _check_window(kernel, strides, padding)
    out = tuple((d + 2 * p - k) // s + 1 for d, k, s, p in zip(hw, kernel, strides, padding))
    if any(d + 2 * p < k for d, k, p in zip(hw, kernel, padding)):
        raise ValueError(f"kernel {tuple(kernel)} is larger than the padded input {tuple(hw)}")
    return out


def _conv_shape(x, w, *, strides, padding):
    n, c, h, wd = _image(x, "conv2d input")
    o, c2, kh, kw = _image(w, "conv2d weight", batch_dynamic=False)
    if c != c2:
        raise ValueError(f"conv2d: input has {c} channels, weight expects {c2}")
    return (n, o, *_window_out((h, wd), (kh, kw), strides, padding))


def _conv_input_grad_shape(ct, w, *, input_hw, strides, padding):
    n, o, oh, ow = _image(ct, "conv2d_input_grad cotangent")
    o2, c, kh, kw = _image(w, "conv2d weight", batch_dynamic=False)
    if o != o2 or _window_out(input_hw, (kh, kw), strides, padding) != (oh, ow):
        raise ValueError(f"conv2d_input_grad: cotangent {tuple(ct)} does not match weight {tuple(w)} "
                         f"and input size {tuple(input_hw)}")
    return (n, c, *input_hw)


def _conv_filter_grad_shape(x, ct, *, kernel, strides, padding):
    n, c, h, wd = _image(x, "conv2d_filter_grad input")
    n2, o, oh, ow = _image(ct, "conv2d_filter_grad cotangent")
    unify_dims(n, n2)
    if _window_out((h, wd), kernel, strides, padding) != (oh, ow):
        raise ValueError(f"conv2d_filter_grad: cotangent {tuple(ct)} does not match input {tuple(x)}")
    return (o, c, *kernel)


def _pool_shape(x, *, kernel, strides, padding):
    n, c, h, w = _image(x, "pooling input")
    return (n, c, *_window_out((h, w), kernel, strides, padding))


def _max_pool_grad_shape(x, ct, *, kernel, strides, padding):
    if _pool_shape(x, kernel=kernel, strides=strides, padding=padding)[1:] != tuple(ct)[1:] or len(ct) != 4:
        raise ValueError(f"max_pool2d_grad: cotangent {tuple(ct)} does not match input {tuple(x)}")
    unify_dims(x[0], ct[0])
    return tuple(x)


def _avg_pool_grad_shape(ct, *, input_hw, kernel, strides, padding):
    n, c, oh, ow = _image(ct, "avg_pool2d_grad cotangent")
    if _window_out(input_hw, kernel, strides, padding) != (oh, ow):
        raise ValueError(f"avg_pool2d_grad: cotangent {tuple(ct)} does not match input size {tuple(input_hw)}")
    return (n, c, *input_hw)


def _embedding_shape(table, indices):
    if len(table) != 2 or None in table:
        raise ValueError(f"embedding table must be 2-D with a fixed shape, got {tuple(table)}")
    return (*indices, table[1])


def _embedding_grad_shape(ct, indices, *, num_rows):
    if len(ct) != len(indices) + 1 or ct[-1] is None:
        raise ValueError(f"embedding_grad: cotangent {tuple(ct)} does not match indices {tuple(indices)}")
    for a, b in zip(ct, indices):
        unify_dims(a, b)
    return (num_rows, ct[-1])


def _embedding_operands(table, indices, **_) -> str | None:
    if table not in FLOATS:
        return f"the table must be float32 or float64, got {table}"
    return None if indices in INDEX_DTYPES else f"indices must be int32 or int64, got {indices}"


# NumPy implementations ------------------------------------------------------------


def _pad(x, padding, value):
    (ph, pw) = padding
    return np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=value) if ph or pw else x


def _windows(x, kernel, strides, padding, value=0.0):
    """(N, C, OH, OW, KH, KW) view of the windows of `x` padded with `value`."""
    view = sliding_window_view(_pad(x, padding, value), tuple(kernel), axis=(2, 3))
    return view[:, :, :: strides[0], :: strides[1]]


def _scatter_windows(per_offset, shape, kernel, strides, padding):
    """Add `per_offset(kh, kw)` (N, C', OH, OW) into the window positions of a (N, C', H, W) zero image."""
    n, c, h, w = shape
    (ph, pw), (sh, sw) = padding, strides
    out = None
    for kh in range(kernel[0]):
        for kw in range(kernel[1]):
            part = per_offset(kh, kw)
            if out is None:
                out = np.zeros((n, c, h + 2 * ph, w + 2 * pw), part.dtype)
            oh, ow = part.shape[2:]
            out[:, :, kh : kh + sh * oh : sh, kw : kw + sw * ow : sw] += part
    return out[:, :, ph : ph + h, pw : pw + w]


def _conv2d(x, w, strides, padding):
    out = np.tensordot(_windows(x, w.shape[2:], strides, padding), w, axes=([1, 4, 5], [1, 2, 3]))
    return np.ascontiguousarray(out.transpose(0, 3, 1, 2))


def _conv2d_input_grad(ct, w, input_hw, strides, padding):
    shape = (ct.shape[0], w.shape[1], *input_hw)
    return _scatter_windows(lambda kh, kw: np.einsum("nohw,oc->nchw", ct, w[:, :, kh, kw]),
                            shape, w.shape[2:], strides, padding)


def _conv2d_filter_grad(x, ct, kernel, strides, padding):
    return np.tensordot(ct, _windows(x, kernel, strides, padding), axes=([0, 2, 3], [0, 2, 3]))


def _max_pool2d(x, kernel, strides, padding):
    return _windows(x, kernel, strides, padding, -np.inf).max(axis=(4, 5))


def _first_max(x, kernel, strides, padding):
    """(N, C, OH, OW): row-major offset kh * KW + kw of each window's first maximum."""
    win = _windows(x, kernel, strides, padding, -np.inf)
    return win.reshape(*win.shape[:4], -1).argmax(axis=-1)


def _max_pool2d_grad(x, ct, kernel, strides, padding):
    arg = _first_max(x, kernel, strides, padding)
    return _scatter_windows(lambda kh, kw: np.where(arg == kh * kernel[1] + kw, ct, 0).astype(ct.dtype),
                            x.shape, kernel, strides, padding)


def _avg_pool2d(x, kernel, strides, padding):
    return _windows(x, kernel, strides, padding).sum(axis=(4, 5)) / (kernel[0] * kernel[1])


def _avg_pool2d_grad(ct, input_hw, kernel, strides, padding):
    share = ct / (kernel[0] * kernel[1])
    return _scatter_windows(lambda kh, kw: share, (*ct.shape[:2], *input_hw), kernel, strides, padding)


def _embedding_grad(ct, indices, num_rows):
    out = np.zeros((num_rows, ct.shape[-1]), ct.dtype)
    np.add.at(out, indices, ct)
    return out


# Lowerings ---------------------------------------------------------------------------


def _d(i: int) -> ir.AffineExpr:
    return ir.AffineDimExpr.get(i)


def _c(v: int) -> ir.AffineExpr:
    return ir.AffineConstantExpr.get(v)


def _amap(n_dims: int, exprs) -> ir.AffineMapAttr:
    return ir.AffineMapAttr.get(ir.AffineMap.get(n_dims, 0, list(exprs)))


def _window_expr(out_dim: int, k_dim: int, stride: int) -> ir.AffineExpr:
    """out * stride + k: the padded input position a window offset reads."""
    return ir.AffineAddExpr.get(ir.AffineMulExpr.get(_d(out_dim), _c(stride)), _d(k_dim))


def _loop_index(dim: int) -> ir.Value:
    return linalg.IndexOp(dim).result


def _i64s(values) -> ir.DenseI64ArrayAttr:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def _spread(x: ir.Value, low, high, value, strides=(1, 1)) -> ir.Value:
    """`x` (NCHW) placed with `strides` between elements into a `value`-filled image padded by `low`/`high`."""
    sizes = emit.dims(x)
    if not any(low) and not any(high) and tuple(strides) == (1, 1):
        return x
    spatial = [lo + (d - 1) * s + 1 + hi for d, lo, hi, s in zip(sizes[2:], low, high, strides)]
    dest = emit.fill(value, sizes[:2] + spatial, tensor_dtype(x.type))
    dynamic, static = emit.mixed(sizes)
    return tensor.insert_slice(x, dest, [], dynamic, [], _i64s([0, 0, *low]), _i64s(static),
                               _i64s([1, 1, *strides]))


def _named_window_op(op, x: ir.Value, window: ir.Value, out_sizes, init, strides) -> ir.Value:
    out = emit.fill(init, out_sizes, tensor_dtype(x.type))
    return emit.as_value(op(x, window, outs=[out], strides=list(strides), dilations=[1, 1]))


# Convolutions are matmuls of the weight and the input's windows gathered into a matrix (im2col):
# IREE 3.13 compiled the small NCHW convolutions of a LeNet (linalg.conv_2d_nchw_fchw, and the
# filter gradient as one contraction reading the windows) to loop nests running at 1-2 GFLOP/s,
# its matmuls at 10-20x that. Named matmuls keep the gather a dispatch of its own: IREE fuses no
# producer into one (into a contraction written as linalg.generic it fused the gather back).


def _windows_matrix(x: ir.Value, kernel, strides, windows_first: bool) -> ir.Value:
    """The (KH, KW) windows of x (N, C, H, W), already padded, with `strides` between them: a matrix
    (C*KH*KW, N*OH*OW) with a window per column if `windows_first`, else its transpose."""
    dtype = tensor_dtype(x.type)
    n, c, h, w = emit.dims(x)
    (kh, kw), (sh, sw) = kernel, strides
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    window, image = [c, kh, kw], [n, oh, ow]
    # Loop dims: (c, i, j, n, oh, ow), or (n, oh, ow, c, i, j).
    ci, ii, ji, ni, ohi, owi = (0, 1, 2, 3, 4, 5) if windows_first else (3, 4, 5, 0, 1, 2)
    x_map = _amap(6, [_d(ni), _d(ci), _window_expr(ohi, ii, sh), _window_expr(owi, ji, sw)])
    sizes = window + image if windows_first else image + window
    (gathered,) = emit.generic([x], [x_map], [emit.empty(sizes, dtype)], [_amap(6, [_d(i) for i in range(6)])],
                               [emit.PARALLEL] * 6, lambda a: a[0])
    rows, cols = (c * kh * kw, emit.product(image)) if windows_first else (emit.product(image), c * kh * kw)
    return emit.reshape(gathered, [rows, cols])


def _correlate(x: ir.Value, w: ir.Value, strides) -> ir.Value:
    """Cross-correlation (N, O, OH, OW) of x (N, C, H, W), already padded, with w (O, C, KH, KW): the
    matmul of w as (O, C*KH*KW) and the windows as (C*KH*KW, N*OH*OW), transposed to NCHW."""
    dtype = tensor_dtype(x.type)
    o, c, kh, kw = shape_of(w.type)
    windows = _windows_matrix(x, (kh, kw), strides, windows_first=True)
    cols = emit.dim(windows, 1)
    out = linalg.matmul(emit.reshape(w, [o, c * kh * kw]), windows, outs=[emit.fill(0.0, [o, cols], dtype)])
    n, _, h, wd = emit.dims(x)
    oh, ow = (h - kh) // strides[0] + 1, (wd - kw) // strides[1] + 1
    return _swap_leading(emit.reshape(emit.as_value(out), [o, n, oh, ow]))


def _swap_leading(x: ir.Value) -> ir.Value:
    """x (A, B, H, W) as (B, A, H, W)."""
    a, b, h, w = emit.dims(x)
    swapped = emit.empty([b, a, h, w], tensor_dtype(x.type))
    (out,) = emit.generic([x], [_amap(4, [_d(1), _d(0), _d(2), _d(3)])], [swapped],
                          [_amap(4, [_d(i) for i in range(4)])], [emit.PARALLEL] * 4, lambda v: v[0])
    return out


def _lower_conv2d(view, x, w):
    return _correlate(_spread(x, view.padding, view.padding, 0.0), w, view.strides)


def _transposed_padding(input_hw, out_hw, kernel, strides, padding):
    """(low, high) padding of a stride-dilated cotangent so a stride-1 window op yields `input_hw`."""
    low = [k - 1 - p for k, p in zip(kernel, padding)]
    high = [h + k - 1 - ((o - 1) * s + 1) - lo for h, o, k, s, lo in zip(input_hw, out_hw, kernel, strides, low)]
    return low, high


def _lower_conv2d_input_grad(view, ct, w):
    o, c, kh, kw = shape_of(w.type)
    low, high = _transposed_padding(view.input_hw, shape_of(ct.type)[2:], (kh, kw), view.strides, view.padding)
    spread = _spread(ct, low, high, 0.0, view.strides)
    # The weight flipped in space with in/out channels swapped: w'[c, o, i, j] = w[o, c, kh-1-i, kw-1-j]
    # (read by tensor.extract: linalg's shape inference rejects negative coefficients in indexing maps).
    def flip(a):
        c_, o_, i, j = (_loop_index(d) for d in range(4))
        return tensor.extract(w, [o_, c_, arith.subi(emit.index(kh - 1), i), arith.subi(emit.index(kw - 1), j)])

    (flipped,) = emit.generic([], [], [emit.empty([c, o, kh, kw], tensor_dtype(w.type))],
                              [_amap(4, [_d(i) for i in range(4)])], [emit.PARALLEL] * 4, flip)
    # A named convolution: the im2col of the dilated cotangent (C*KH*KW rows of the larger image)
    # measured ~1.5x slower in LeNet's backward.
    return _named_window_op(linalg.conv_2d_nchw_fchw, spread, flipped,
                            [emit.dim(ct, 0), c, *view.input_hw], 0.0, (1, 1))


def _lower_conv2d_filter_grad(view, x, ct):
    """dw[o, c, i, j] = sum over (n, oh, ow) of xpad[n, c, oh*sh + i, ow*sw + j] * ct[n, o, oh, ow]: the
    matmul of ct as (O, N*OH*OW) and the windows as (N*OH*OW, C*KH*KW)."""
    p = view.padding
    dtype = tensor_dtype(x.type)
    n, o, oh, ow = emit.dims(ct)
    c, (kh, kw) = shape_of(x.type)[1], view.kernel
    windows = _windows_matrix(_spread(x, p, p, 0.0), view.kernel, view.strides, windows_first=False)
    out = linalg.matmul(emit.reshape(_swap_leading(ct), [o, emit.product([n, oh, ow])]), windows,
                        outs=[emit.fill(0.0, [o, c * kh * kw], dtype)])
    return emit.reshape(emit.as_value(out), [o, c, kh, kw])


def _lower_max_pool2d(view, x):
    out = _pool_shape(shape_of(x.type), kernel=view.kernel, strides=view.strides, padding=view.padding)
    window = emit.empty(list(view.kernel), tensor_dtype(x.type))
    return _named_window_op(linalg.pooling_nchw_max, _spread(x, view.padding, view.padding, -np.inf), window,
                            [emit.dim(x, 0), *out[1:]], -np.inf, view.strides)


def _first_max_of(inputs, maps, out_sizes, kw: int, dtype) -> ir.Value:
    """int64 offsets i * kw + j of the first maximum of `inputs[0]` over loop dims 4, 5 (i, j: a window)
    into `out_sizes` (loop dims 0-3); a NaN wins over numbers, the first NaN over later ones (np.argmax)."""
    i64 = element_type(I64)

    def body(a):
        value, best, best_at = a[0], *a[-2:]
        at = arith.index_cast(i64, arith.addi(arith.muli(_loop_index(4), emit.index(kw)), _loop_index(5)))
        better = arith.cmpf(arith.CmpFPredicate.OGT, value, best)
        value_nan = arith.cmpf(arith.CmpFPredicate.UNO, value, value)
        best_is_number = arith.cmpf(arith.CmpFPredicate.ORD, best, best)
        first = arith.cmpi(arith.CmpIPredicate.slt, best_at, arith.constant(i64, 0))
        take = arith.ori(arith.ori(better, arith.andi(value_nan, best_is_number)), first)
        return [arith.select(take, value, best), arith.select(take, at, best_at)]

    inits = [emit.fill(-np.inf, out_sizes, dtype), emit.fill(-1, out_sizes, I64)]
    _, first = emit.generic(inputs, maps, inits, [_amap(6, [_d(i) for i in range(4)])] * 2,
                            [emit.PARALLEL] * 4 + [emit.REDUCTION] * 2, body)
    return first


def _lower_first_max(view, x: ir.Value) -> ir.Value:
    """(N, C, OH, OW) int64 offsets of each window's first maximum (NaN wins), as in `_first_max`."""
    (sh, sw), (kh, kw) = view.strides, view.kernel
    out_sizes = [emit.dim(x, 0), *_pool_shape(shape_of(x.type), kernel=view.kernel, strides=view.strides,
                                              padding=view.padding)[1:]]
    # Loop dims: n, c, oh, ow (parallel); i, j (reduction over the window).
    x_map = _amap(6, [_d(0), _d(1), _window_expr(2, 4, sh), _window_expr(3, 5, sw)])
    padded = _spread(x, view.padding, view.padding, -np.inf)
    return _first_max_of([padded, emit.empty([kh, kw], tensor_dtype(x.type))], [x_map, _amap(6, [_d(4), _d(5)])],
                         out_sizes, kw, tensor_dtype(x.type))


def _lower_max_pool2d_grad(view, x, ct):
    """dx[n, c, h, w] = sum over window offsets (i, j) whose window (oh, ow) covers (h, w) and has its
    first maximum at (i, j) of ct[n, c, oh, ow]; (oh, ow) is computed, so ct is read by tensor.extract."""
    if _tiles(view):
        return _lower_tiled_max_pool2d_grad(view, x, ct)
    first = _lower_first_max(view, x)
    dtype = tensor_dtype(x.type)
    (kh, kw), oh_ow = view.kernel, shape_of(ct.type)[2:]
    zero = emit.scalar_constant(0.0, dtype)
    index = ir.IndexType.get()

    def window_row(pos: ir.Value, k: ir.Value, pad: int, stride: int, size: int):
        """(in range, clamped window index) of the window whose offset k covers input position pos."""
        start = arith.subi(arith.addi(pos, emit.index(pad)), k)  # oh * stride when covered
        row = arith.divsi(start, emit.index(stride))
        ok = arith.andi(arith.cmpi(arith.CmpIPredicate.sge, start, emit.index(0)),
                        arith.cmpi(arith.CmpIPredicate.eq, arith.remsi(start, emit.index(stride)), emit.index(0)))
        ok = arith.andi(ok, arith.cmpi(arith.CmpIPredicate.slt, row, emit.index(size)))
        return ok, arith.select(ok, row, emit.index(0))

    def body(a):
        _, acc = a
        n, c, h, w, i, j = (_loop_index(d) for d in range(6))
        ok_h, oh = window_row(h, i, view.padding[0], view.strides[0], oh_ow[0])
        ok_w, ow = window_row(w, j, view.padding[1], view.strides[1], oh_ow[1])
        at = arith.index_cast(index, tensor.extract(first, [n, c, oh, ow]))
        chosen = arith.cmpi(arith.CmpIPredicate.eq, at, arith.addi(arith.muli(i, emit.index(kw)), j))
        hit = arith.andi(arith.andi(ok_h, ok_w), chosen)
        return arith.addf(acc, arith.select(hit, tensor.extract(ct, [n, c, oh, ow]), zero))

    maps = [_amap(6, [_d(4), _d(5)]), _amap(6, [_d(0), _d(1), _d(2), _d(3)])]
    (out,) = emit.generic([emit.empty([kh, kw], dtype)], maps[:1], [emit.fill(0.0, emit.dims(x), dtype)],
                          maps[1:], [emit.PARALLEL] * 4 + [emit.REDUCTION] * 2, body)
    return out


def _tiles(view) -> bool:
    """Whether the pooling windows tile the image (stride == kernel, no padding): each input position
    lies in one window at most, so a gradient is a map over the image viewed as tiles (N, C, OH, KH,
    OW, KW), every indexing map a projection (IREE vectorizes it; the general forms compute which
    windows cover a position and gather)."""
    return tuple(view.strides) == tuple(view.kernel) and not any(view.padding)


def _from_tiles(values, kernel, hw, body) -> ir.Value:
    """An image (N, C, H, W) made tile by tile: `body(elements, offset)` of each tile's elements of
    `values` (each (N, C, OH, OW); the last one's dtype is the image's) and the position's offset
    i * KW + j in its tile; 0 past the last tile."""
    dtype = tensor_dtype(values[-1].type)
    n, c, oh, ow = emit.dims(values[-1])
    (kh, kw), (h, w) = kernel, hw

    def scalar(a):
        return body(a[: len(values)], arith.addi(arith.muli(_loop_index(3), emit.index(kw)), _loop_index(5)))

    # Loop dims: n, c, oh, i, ow, j.
    (tiles,) = emit.generic(values, [_amap(6, [_d(0), _d(1), _d(2), _d(4)])] * len(values),
                            [emit.empty([n, c, oh, kh, ow, kw], dtype)], [_amap(6, [_d(i) for i in range(6)])],
                            [emit.PARALLEL] * 6, scalar)
    return _spread(emit.reshape(tiles, [n, c, oh * kh, ow * kw]), (0, 0), (h - oh * kh, w - ow * kw), 0.0)


def _lower_tiled_max_pool2d_grad(view, x, ct):
    """`_lower_max_pool2d_grad` for windows that tile the image (`_tiles`)."""
    dtype = tensor_dtype(x.type)
    (kh, kw), (oh, ow) = view.kernel, shape_of(ct.type)[2:]
    n, c, h, w = emit.dims(x)
    covered = [n, c, oh * kh, ow * kw]
    if (h, w) != (oh * kh, ow * kw):  # rows and columns past the last window
        dynamic, static = emit.mixed(covered)
        x = tensor.extract_slice(tensor_type(emit.static_shape(covered), dtype), x, [], dynamic, [],
                                 _i64s([0] * 4), _i64s(static), _i64s([1] * 4))
    # Loop dims: n, c, oh, ow (parallel); i, j (reduction over the tile).
    tile_map = _amap(6, [_d(0), _d(1), _d(2), _d(4), _d(3), _d(5)])
    first = _first_max_of([emit.reshape(x, [n, c, oh, kh, ow, kw])], [tile_map], [n, c, oh, ow], kw, dtype)
    i64 = element_type(I64)
    zero = emit.scalar_constant(0.0, dtype)

    def body(a, offset):  # 0 + ct, as the general form's sum (-0.0 becomes 0.0)
        at, value = a
        hit = arith.cmpi(arith.CmpIPredicate.eq, at, arith.index_cast(i64, offset))
        return arith.addf(zero, arith.select(hit, value, zero))

    return _from_tiles([first, ct], view.kernel, (h, w), body)


def _lower_avg_pool2d(view, x):
    dtype = tensor_dtype(x.type)
    out = _pool_shape(shape_of(x.type), kernel=view.kernel, strides=view.strides, padding=view.padding)
    window = emit.empty(list(view.kernel), dtype)
    total = _named_window_op(linalg.pooling_nchw_sum, _spread(x, view.padding, view.padding, 0.0), window,
                             [emit.dim(x, 0), *out[1:]], 0.0, view.strides)
    return _divide(total, view.kernel[0] * view.kernel[1])


def _divide(x: ir.Value, count: int) -> ir.Value:
    dtype = tensor_dtype(x.type)
    divisor = emit.scalar_constant(count, dtype)
    return emit.elementwise([x], shape_of(x.type), dtype, lambda a: arith.divf(a[0], divisor))


def _lower_avg_pool2d_grad(view, ct):
    """Each window's share ct / (kh * kw), summed over the windows covering each input position:
    a stride-1 sum pool over the share dilated by the stride and padded by kernel - 1 - padding."""
    dtype = tensor_dtype(ct.type)
    if _tiles(view):  # 0 + share, as the sum (-0.0 becomes 0.0)
        zero = emit.scalar_constant(0.0, dtype)
        share = _divide(ct, view.kernel[0] * view.kernel[1])
        return _from_tiles([share], view.kernel, view.input_hw, lambda a, _: arith.addf(zero, a[0]))
    low, high = _transposed_padding(view.input_hw, shape_of(ct.type)[2:], view.kernel, view.strides, view.padding)
    share = _spread(_divide(ct, view.kernel[0] * view.kernel[1]), low, high, 0.0, view.strides)
    return _named_window_op(linalg.pooling_nchw_sum, share, emit.empty(list(view.kernel), dtype),
                            [emit.dim(ct, 0), shape_of(ct.type)[1], *view.input_hw], 0.0, (1, 1))


def _row(index_value: ir.Value, num_rows: int) -> ir.Value:
    """An index element as a row of a `num_rows` table: negatives count from the end, then clamped."""
    i = arith.index_cast(ir.IndexType.get(), index_value)
    wrapped = arith.select(arith.cmpi(arith.CmpIPredicate.slt, i, emit.index(0)),
                           arith.addi(i, emit.index(num_rows)), i)
    return arith.minsi(arith.maxsi(wrapped, emit.index(0)), emit.index(num_rows - 1))


def _lower_embedding(view, table, indices):
    num_rows, width = shape_of(table.type)
    rank = len(shape_of(indices.type))
    sizes = [*emit.dims(indices), width]
    idx_map = _amap(rank + 1, [_d(i) for i in range(rank)])
    out_map = _amap(rank + 1, [_d(i) for i in range(rank + 1)])

    def body(a):
        return tensor.extract(table, [_row(a[0], num_rows), _loop_index(rank)])

    (out,) = emit.generic([indices], [idx_map], [emit.empty(sizes, tensor_dtype(table.type))], [out_map],
                          [emit.PARALLEL] * (rank + 1), body)
    return out


def _lower_embedding_grad(view, ct, indices):
    """dtable[r, d] = sum over index positions p with row(indices[p]) == r of ct[p, d] (a one-hot contraction)."""
    rank = len(shape_of(indices.type))
    dtype = tensor_dtype(ct.type)
    zero = emit.scalar_constant(0.0, dtype)
    # Loop dims: r, d (parallel); the index positions (reduction).
    n = rank + 2
    idx_map = _amap(n, [_d(2 + i) for i in range(rank)])
    ct_map = _amap(n, [*(_d(2 + i) for i in range(rank)), _d(1)])
    out_map = _amap(n, [_d(0), _d(1)])

    def body(a):
        index_value, value, acc = a
        hit = arith.cmpi(arith.CmpIPredicate.eq, _row(index_value, view.num_rows), _loop_index(0))
        return arith.addf(acc, arith.select(hit, value, zero))

    init = emit.fill(0.0, [view.num_rows, shape_of(ct.type)[-1]], dtype)
    (out,) = emit.generic([indices, ct], [idx_map, ct_map], [init], [out_map],
                          [emit.PARALLEL] * 2 + [emit.REDUCTION] * rank, body)
    return out


# VJPs ---------------------------------------------------------------------------------


def _hw(x) -> tuple[int, int]:
    return tuple(bind.shape(x)[2:])


def _conv2d_vjp(ct, out, x, w, *, strides, padding):
    window = dict(strides=strides, padding=padding)
    return (bind.apply("conv2d_input_grad", ct, w, input_hw=_hw(x), **window),
            bind.apply("conv2d_filter_grad", x, ct, kernel=_hw(w), **window))


def _conv2d_input_grad_vjp(g, out, ct, w, *, input_hw, strides, padding):
    window = dict(strides=strides, padding=padding)
    return (bind.apply("conv2d", g, w, **window), bind.apply("conv2d_filter_grad", g, ct, kernel=_hw(w), **window))


def _conv2d_filter_grad_vjp(g, out, x, ct, *, kernel, strides, padding):
    window = dict(strides=strides, padding=padding)
    return (bind.apply("conv2d_input_grad", ct, g, input_hw=_hw(x), **window), bind.apply("conv2d", x, g, **window))


def _max_pool2d_vjp(ct, out, x, *, kernel, strides, padding):
    return (bind.apply("max_pool2d_grad", x, ct, kernel=kernel, strides=strides, padding=padding),)


def _avg_pool2d_vjp(ct, out, x, *, kernel, strides, padding):
    return (bind.apply("avg_pool2d_grad", ct, input_hw=_hw(x), kernel=kernel, strides=strides, padding=padding),)


def _avg_pool2d_grad_vjp(g, out, ct, *, input_hw, kernel, strides, padding):
    return (bind.apply("avg_pool2d", g, kernel=kernel, strides=strides, padding=padding),)


def _embedding_vjp(ct, out, table, indices):
    return bind.apply("embedding_grad", ct, indices, num_rows=bind.shape(table)[0]), None


def _embedding_grad_vjp(g, out, ct, indices, *, num_rows):
    return bind.apply("embedding", g, indices), None


# The table ------------------------------------------------------------------------------

WINDOW = (KERNEL, STRIDES, PADDING)
# Sums (of products): overflow, inf - inf, 0 * inf. Max pooling and embedding rows only copy values.
SUMS = fp_events("nonfinite", "overflow", "invalid")

CONV2D = primitive(
    "conv2d",
    "2-D cross-correlation: x (N, C, H, W) with weight (O, C, KH, KW), zero padding, no bias.",
    impl=_conv2d, shape_rule=_conv_shape, dtype_rule=same_dtype, lower=_lower_conv2d, arity=2,
    params=(STRIDES, PADDING), operand_rule=_floats_agree, vjp=_conv2d_vjp, fp_events=SUMS, approximate=True,
)
CONV2D_INPUT_GRAD = primitive(
    "conv2d_input_grad",
    "The gradient of conv2d with respect to its input (a transposed convolution of the cotangent).",
    impl=_conv2d_input_grad, shape_rule=_conv_input_grad_shape, dtype_rule=same_dtype,
    lower=_lower_conv2d_input_grad, arity=2, params=(INPUT_HW, STRIDES, PADDING), operand_rule=_floats_agree,
    vjp=_conv2d_input_grad_vjp, fp_events=SUMS, approximate=True,
)
CONV2D_FILTER_GRAD = primitive(
    "conv2d_filter_grad",
    "The gradient of conv2d with respect to its weight, from the input and the cotangent.",
    impl=_conv2d_filter_grad, shape_rule=_conv_filter_grad_shape, dtype_rule=same_dtype,
    lower=_lower_conv2d_filter_grad, arity=2, params=WINDOW, operand_rule=_floats_agree,
    vjp=_conv2d_filter_grad_vjp, fp_events=SUMS, approximate=True,
)
MAX_POOL2D = primitive(
    "max_pool2d",
    "Max pooling over (KH, KW) windows of x (N, C, H, W), padded with -inf.",
    impl=_max_pool2d, shape_rule=_pool_shape, dtype_rule=same_dtype, lower=_lower_max_pool2d, arity=1,
    params=WINDOW, operand_rule=_floats_agree, vjp=_max_pool2d_vjp,
)
MAX_POOL2D_GRAD = primitive(
    "max_pool2d_grad",
    "The gradient of max_pool2d: each window's cotangent added at the window's first maximum.",
    impl=_max_pool2d_grad, shape_rule=_max_pool_grad_shape, dtype_rule=same_dtype,
    lower=_lower_max_pool2d_grad, arity=2, params=WINDOW, operand_rule=_floats_agree,
    vjp=bind.NotDifferentiable("second derivatives through max pooling are not supported: the derivative "
                               "in the cotangent needs a gather-at-the-first-maximum primitive"),
    fp_events=SUMS, approximate=True,
)
AVG_POOL2D = primitive(
    "avg_pool2d",
    "Average pooling over (KH, KW) windows of x (N, C, H, W), zero padded, always dividing by KH * KW.",
    impl=_avg_pool2d, shape_rule=_pool_shape, dtype_rule=same_dtype, lower=_lower_avg_pool2d, arity=1,
    params=WINDOW, operand_rule=_floats_agree, vjp=_avg_pool2d_vjp, fp_events=SUMS, approximate=True,
)
AVG_POOL2D_GRAD = primitive(
    "avg_pool2d_grad",
    "The gradient of avg_pool2d: each window's cotangent / (KH * KW) added over the window.",
    impl=_avg_pool2d_grad, shape_rule=_avg_pool_grad_shape, dtype_rule=same_dtype,
    lower=_lower_avg_pool2d_grad, arity=1, params=(INPUT_HW, *WINDOW), operand_rule=_floats_agree,
    vjp=_avg_pool2d_grad_vjp, fp_events=SUMS, approximate=True,
)
EMBEDDING = primitive(
    "embedding",
    "Rows of a (V, D) table picked by an integer index array: `table[indices]`, shape indices.shape + (D,).",
    impl=lambda table, indices: table[indices], shape_rule=_embedding_shape, dtype_rule=same_dtype,
    lower=_lower_embedding, arity=2, operand_rule=_embedding_operands, vjp=_embedding_vjp,
)
EMBEDDING_GRAD = primitive(
    "embedding_grad",
    "The gradient of embedding: cotangent rows added into a zero (num_rows, D) table at their indices.",
    impl=_embedding_grad, shape_rule=_embedding_grad_shape, dtype_rule=same_dtype,
    lower=_lower_embedding_grad, arity=2, params=(NUM_ROWS,),
    operand_rule=lambda ct, indices, **_: _embedding_operands(ct, indices), vjp=_embedding_grad_vjp, fp_events=SUMS,
    approximate=True,
)
