/**
 * Ferry's tensors: n-dimensional arrays with autograd ({@code dev.ferry.tensor}), layers
 * ({@code dev.ferry.tensor.nn}) and optimizers ({@code dev.ferry.tensor.optim}). Knows nothing
 * about RPC. The kernels ({@code dev.ferry.tensor.internal}) are not exported.
 */
module dev.ferry.tensor {
    requires dev.ludovic.netlib.blas;
    requires java.logging;
    requires org.apache.commons.numbers.gamma;

    exports dev.ferry.tensor;
    exports dev.ferry.tensor.autograd;
    exports dev.ferry.tensor.nn;
    exports dev.ferry.tensor.optim;
}
