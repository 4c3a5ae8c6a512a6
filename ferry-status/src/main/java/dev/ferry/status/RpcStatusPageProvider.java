package dev.ferry.status;

import dev.ferry.rpc.spi.StatusPageProvider;

import java.util.List;

/**
 * The status page for groups started without the launcher ({@code RpcBackendOptions.statusPagePort}):
 * rank 0's agent finds this by {@link java.util.ServiceLoader} and serves a {@link StatusServer}.
 * Without a launcher there is no view of the workers' processes: a worker that stops reporting shows
 * as unresponsive after {@value ClusterState#STALE_MILLIS} ms rather than as gone. Public for
 * {@link java.util.ServiceLoader}; loaded only where {@code ferry-rpc} is on the class path.
 */
public final class RpcStatusPageProvider implements StatusPageProvider {

    public RpcStatusPageProvider() {
    }

    @Override
    public StatusPage start(int port, String authToken, int worldSize) {
        StatusServer server = StatusServer.start(port, authToken, worldSize, List::of);
        return new StatusPage() {
            @Override
            public String pageUrl() {
                return server.pageUri().toString();
            }

            @Override
            public String reportUrl(int rank) {
                return server.reportUrl(rank);
            }

            @Override
            public void close() {
                server.close();
            }
        };
    }
}
