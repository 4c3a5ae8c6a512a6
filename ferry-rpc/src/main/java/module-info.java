/**
 * Ferry's RPC core: the API ({@code dev.ferry.rpc}), the extension SPI ({@code dev.ferry.rpc.spi})
 * and the rendezvous stores' API ({@code dev.ferry.rpc.store}). The implementation
 * ({@code dev.ferry.rpc.internal.*}) is not exported: a program on the module path can neither
 * compile against it nor reach it by reflection. A program's own module opens the packages whose
 * functions peers call and whose values travel: Ferry resolves those functions, and Fory encodes
 * those values, by reflection.
 *
 * <pre>
 * module com.example.app {
 *     requires dev.ferry.rpc;
 *     opens com.example.app;
 * }
 * </pre>
 */
module dev.ferry.rpc {
    requires transitive org.apache.fory.core;
    requires org.slf4j;
    requires io.netty.buffer;
    requires io.netty.codec;
    requires io.netty.common;
    requires io.netty.handler;
    requires io.netty.transport;
    requires io.netty.transport.classes.epoll;
    requires io.netty.transport.unix.common;
    requires java.management;
    requires java.net.http;
    requires jdk.jfr;

    exports dev.ferry.rpc;
    exports dev.ferry.rpc.spi;
    exports dev.ferry.rpc.store;

    uses dev.ferry.rpc.spi.CallInterceptor;
    uses dev.ferry.rpc.spi.CallObserver;
    uses dev.ferry.rpc.spi.PeerListener;
    uses dev.ferry.rpc.spi.SerializationExtension;
    uses dev.ferry.rpc.spi.StatusPageProvider;
    uses dev.ferry.rpc.spi.StoreProvider;
    uses dev.ferry.rpc.spi.TrustedFunctions;
}
