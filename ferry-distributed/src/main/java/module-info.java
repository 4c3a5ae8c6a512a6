/**
 * Distributed training over Ferry's RPC: distributed autograd, {@code DistributedOptimizer},
 * {@code RemoteModule}, pipelines, and tensors as call values (found by the RPC core as services).
 * Peers call its entry points in {@code dev.ferry.distributed.internal}, which is not exported.
 */
module dev.ferry.distributed {
    requires transitive dev.ferry.rpc;
    requires transitive dev.ferry.tensor;
    requires org.slf4j;

    exports dev.ferry.distributed;
    exports dev.ferry.distributed.autograd;
    exports dev.ferry.distributed.nn;
    exports dev.ferry.distributed.optim;
    exports dev.ferry.distributed.pipeline;

    // Ferry's RPC core resolves the functions peers call and reads the serializable form of the
    // lambdas and method references this module sends: it needs deep access, and only it.
    opens dev.ferry.distributed to dev.ferry.rpc;
    opens dev.ferry.distributed.autograd to dev.ferry.rpc;
    opens dev.ferry.distributed.internal to dev.ferry.rpc;
    opens dev.ferry.distributed.internal.pipeline to dev.ferry.rpc;
    opens dev.ferry.distributed.nn to dev.ferry.rpc;
    opens dev.ferry.distributed.optim to dev.ferry.rpc;
    opens dev.ferry.distributed.pipeline to dev.ferry.rpc;

    provides dev.ferry.rpc.spi.CallInterceptor with dev.ferry.distributed.internal.AutogradInterceptor;
    provides dev.ferry.rpc.spi.PeerListener with dev.ferry.distributed.internal.LostCreatorRelease;
    provides dev.ferry.rpc.spi.SerializationExtension with dev.ferry.distributed.TensorSerialization;
    provides dev.ferry.rpc.spi.TrustedFunctions with dev.ferry.distributed.internal.DistributedEntryPoints;
}
