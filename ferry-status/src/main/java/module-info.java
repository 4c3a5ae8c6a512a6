/**
 * The live status page of a running cluster ({@code dev.ferry.status.StatusServer}), on the JDK's
 * HTTP server, and the status page provider the RPC core finds as a service. Its page's assets are
 * resources of this module, read by its own classes only.
 */
module dev.ferry.status {
    requires transitive dev.ferry.rpc;
    requires jdk.httpserver;
    requires org.slf4j;

    exports dev.ferry.status;

    provides dev.ferry.rpc.spi.StatusPageProvider with dev.ferry.status.RpcStatusPageProvider;
}
