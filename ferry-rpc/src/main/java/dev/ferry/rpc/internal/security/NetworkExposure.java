package dev.ferry.rpc.internal.security;

import dev.ferry.rpc.RpcException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * What a worker without a token or TLS lets others do, decided once at start: on loopback it
 * works and says so in one warning (any local process could join the group before the real worker
 * does, or call a worker once it has); on any other address it is refused unless the application
 * opted in ({@code RpcBackendOptions.Builder.allowUnauthenticatedNetwork}), since anyone who can
 * reach that address could do the same.
 */
public final class NetworkExposure {
    private static final Logger log = LoggerFactory.getLogger(NetworkExposure.class);

    private NetworkExposure() {
    }

    /**
     * Refuses {@code what} listening on {@code host} when the group is unauthenticated and the host
     * is not loopback, unless {@code allowed}.
     *
     * @throws RpcException {@link RpcException.Code#INVALID_ARGUMENT}, saying how to fix it
     */
    public static void checkListen(String what, String host, boolean authenticated, boolean allowed) {
        if (authenticated || allowed || isLoopback(host)) {
            return;
        }
        throw new RpcException(RpcException.Code.INVALID_ARGUMENT, what + " would listen on " + host
                + ", which is not a loopback address, with neither an authentication token nor TLS: anyone who can"
                + " reach it could join the group or call its workers. Give the group a token"
                + " (RpcBackendOptions.Builder.authToken or FERRY_AUTH_TOKEN, at least 16 characters; ferry run"
                + " sets a fresh one) or TLS (RpcBackendOptions.Builder.tls or FERRY_TLS_KEYSTORE), or, on a network"
                + " you trust, allow it: RpcBackendOptions.Builder.allowUnauthenticatedNetwork(true)");
    }

    /** Logs the one warning of a worker whose group is unauthenticated; nothing when it is authenticated. */
    public static void warnIfUnauthenticated(String worker, boolean authenticated) {
        if (!authenticated) {
            log.warn("{}: this group is not authenticated: any process that can connect to its workers can join it"
                    + " or call them. Give every worker the same token (RpcBackendOptions.Builder.authToken or"
                    + " FERRY_AUTH_TOKEN, at least 16 characters); ferry run sets a fresh one for each group", worker);
        }
    }

    /** Whether every address {@code host} names is a loopback one (an unresolvable host is not). */
    static boolean isLoopback(String host) {
        try {
            for (InetAddress address : InetAddress.getAllByName(host)) {
                if (!address.isLoopbackAddress()) {
                    return false;
                }
            }
            return true;
        } catch (UnknownHostException e) {
            return false;
        }
    }
}
