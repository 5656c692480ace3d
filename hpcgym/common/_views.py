"""C-contiguous views of part of a 1-D array, for compiled code (and a borrowed array).

The engine keeps its state in one int64 buffer (:mod:`hpcgym.sim._kernels`) and compiled
code rebuilds named views of its segments on every call. ``buffer[a:b].reshape((n, m))``
does that, but numba compiles ``reshape`` as a call into its C helper
(``numba_attempt_nocopy_reshape``) and keeps the view's reference count across it: two
atomic operations its reference-count pruning cannot remove, for every view, at every
event. In the compiled event loop that was most of the time of a run (docs/BENCHMARKS.md).
:func:`matrix` (and :func:`vector`, :func:`cube`) build the same view directly, as numba
builds a slice: same type (``array(dtype, 2d, C)``, so no kernel is compiled again for
another layout), no call, and a reference the pruning removes.
"""

from __future__ import annotations

from typing import Any

from numba import types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array


def _view(buffer: Any, dims: int) -> Any:
    """The typing and code of a ``dims``-d C-contiguous view of a 1-D ``buffer`` (see :func:`matrix`).

    Arguments ``(buffer, start, n_1, ..., n_dims)``: the view starts at ``buffer[start]`` and
    has shape ``(n_1, ..., n_dims)``; it shares the buffer's memory-info block, as a slice does.
    """
    if not (isinstance(buffer, types.Array) and buffer.ndim == 1 and buffer.layout == "C"):
        return None
    result = types.Array(buffer.dtype, dims, "C")

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        src = make_array(signature.args[0])(context, builder, args[0])
        out = make_array(result)(context, builder)
        intp = context.get_value_type(types.intp)
        first = context.cast(builder, args[1], signature.args[1], types.intp)
        shape = [context.cast(builder, args[2 + d], signature.args[2 + d], types.intp) for d in range(dims)]
        strides = [src.itemsize]
        for n in shape[:0:-1]:  # C order: each dimension's stride is the next one's times its length
            strides.insert(0, builder.mul(strides[0], n))
        populate_array(
            out,
            data=builder.gep(src.data, [first]),
            shape=cgutils.pack_array(builder, shape, ty=intp),
            strides=cgutils.pack_array(builder, strides, ty=intp),
            itemsize=src.itemsize,
            meminfo=src.meminfo,
            parent=src.parent,
        )
        return impl_ret_borrowed(context, builder, result, out._getvalue())

    return result, codegen


@intrinsic
def vector(typingctx: Any, buffer: Any, start: Any, size: Any) -> Any:
    """``buffer[start : start + size]`` as a view, in compiled code only, with no checks.

    numba compiles a slice with the bounds handling of Python's (negative starts wrap,
    ends are clamped to the length): a dozen instructions and branches for every segment
    of the engine buffer a kernel names, at every call. The callers here take ``start``
    and ``size`` from the buffer's own header, always within it, so :func:`matrix`'s way
    (a view built directly, same type as the slice) serves them too.
    """
    made = _view(buffer, 1)
    return None if made is None else (made[0](buffer, start, size), made[1])


@intrinsic
def matrix(typingctx: Any, buffer: Any, start: Any, rows: Any, cols: Any) -> Any:
    """``buffer[start : start + rows * cols].reshape((rows, cols))`` as a view, in compiled code only.

    ``buffer`` must be a C-contiguous 1-D array holding those ``rows * cols`` items from
    ``start`` on: nothing is checked (callers take the sizes from the buffer's own header).
    """
    made = _view(buffer, 2)
    return None if made is None else (made[0](buffer, start, rows, cols), made[1])


@intrinsic
def cube(typingctx: Any, buffer: Any, start: Any, x: Any, y: Any, z: Any) -> Any:
    """``buffer[start : start + x * y * z].reshape((x, y, z))`` as a view, as :func:`matrix` makes one."""
    made = _view(buffer, 3)
    return None if made is None else (made[0](buffer, start, x, y, z), made[1])


@intrinsic
def borrowed(typingctx: Any, array: Any) -> Any:
    """``array`` itself, without its reference count: a view whose owner the caller keeps alive.

    Numba counts the references of every array view it makes and passes (an atomic
    operation each time, and its pruning leaves many in place where views go through
    tuples and calls between kernels). A borrowed array has no memory-info block, so
    those operations do nothing. Only for arrays that live longer than every use of the
    borrowed one and never escape the compiled call: the compiled event loop
    (:mod:`hpcgym.baselines._loop`) borrows its arguments, which the Python caller holds.
    """
    if not isinstance(array, types.Array):
        return None
    sig = array(array)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        src = make_array(signature.args[0])(context, builder, args[0])
        out = make_array(signature.return_type)(context, builder)
        populate_array(
            out,
            data=src.data,
            shape=src.shape,
            strides=src.strides,
            itemsize=src.itemsize,
            meminfo=None,
            parent=None,
        )
        return out._getvalue()

    return sig, codegen
