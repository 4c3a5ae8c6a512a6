package dev.ferry.rpc.spi;

import java.util.ServiceLoader;

/**
 * Serves a live status page for a group started without the launcher: with
 * {@code RpcBackendOptions.statusPagePort(port)}, rank 0 starts one through the provider found by
 * {@link ServiceLoader} ({@code ferry-status} is one) and every worker reports to it. ({@code ferry
 * run} serves its own page; its workers need no provider.)
 *
 * <pre>{@code
 * RpcBackendOptions options = RpcBackendOptions.builder().statusPagePort(8265).build();
 * RpcAgent agent = Rpc.initRpc("worker" + rank, rank, worldSize, options);
 * // rank 0 logs "status page at http://127.0.0.1:8265/"; its debug info has it as agent.status_page
 * }</pre>
 */
public interface StatusPageProvider {

    /**
     * Starts a page for {@code worldSize} workers on 127.0.0.1:{@code port} ({@code 0}: a free port)
     * that takes reports carrying {@code authToken} (null: any local report).
     */
    StatusPage start(int port, String authToken, int worldSize);

    /** A page being served; closing it stops it. */
    interface StatusPage extends AutoCloseable {
        /** The page's address. */
        String pageUrl();

        /** Where worker {@code rank} reports ({@code RpcBackendOptions.statusUrl}). */
        String reportUrl(int rank);

        @Override
        void close();
    }
}
