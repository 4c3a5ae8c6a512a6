/**
 * A rendezvous store on etcd ({@code dev.ferry.store.etcd.EtcdStore}), and the store provider the
 * RPC core finds as a service for {@code etcd://} init methods. The backend is package-private.
 */
// jetcd's and gRPC's jars are automatic modules; jetcd's have no name in their manifests, so theirs
// come from the jar names Maven gives them (jetcd-core-VERSION.jar: jetcd.core).
@SuppressWarnings("requires-automatic")
module dev.ferry.store.etcd {
    requires transitive dev.ferry.rpc;
    requires jetcd.core;
    requires io.grpc.stub;
    requires org.slf4j;

    exports dev.ferry.store.etcd;

    provides dev.ferry.rpc.spi.StoreProvider with dev.ferry.store.etcd.EtcdStoreProvider;
}
