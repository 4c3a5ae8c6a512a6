package dev.ferry.rpc.internal.store;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcException.Code;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A parsed init method URL: {@code env://}, {@code tcp://host:port} or {@code file:///path}, each
 * optionally followed by {@code ?rank=R&world_size=N} as c10d allows, or a URL of a scheme a
 * {@link dev.ferry.rpc.spi.StoreProvider} opens (only its query is parsed here; the provider reads
 * the rest). Only syntax is checked here; what each scheme requires is checked by the rendezvous,
 * which knows the rank and world size.
 *
 * @param scheme {@code env}, {@code tcp} or {@code file}
 * @param host the host of a tcp URL (IPv6 without brackets), else null
 * @param port the port of a tcp URL, or -1 if absent
 * @param path the path of a file URL, or empty if absent; for a provider's scheme everything
 *     between {@code ://} and the query
 * @param query the decoded query parameters
 */
public record InitMethodUrl(String scheme, String host, int port, String path, Map<String, String> query) {

    public InitMethodUrl {
        query = Map.copyOf(query);
    }

    /**
     * @throws RpcException INVALID_ARGUMENT for an unsupported scheme or a malformed URL
     */
    public static InitMethodUrl parse(String url) {
        return parse(url, java.util.Set.of());
    }

    /**
     * @param providedSchemes the schemes store providers open, accepted besides the built-in ones
     * @throws RpcException INVALID_ARGUMENT for an unsupported scheme or a malformed URL
     */
    public static InitMethodUrl parse(String url, java.util.Set<String> providedSchemes) {
        Objects.requireNonNull(url, "initMethod");
        int schemeEnd = url.indexOf("://");
        if (schemeEnd <= 0) {
            throw unsupported(url, providedSchemes);
        }
        String scheme = url.substring(0, schemeEnd);
        String rest = url.substring(schemeEnd + 3);
        int queryStart = rest.indexOf('?');
        Map<String, String> query = queryStart < 0 ? Map.of() : parseQuery(url, rest.substring(queryStart + 1));
        String authorityAndPath = queryStart < 0 ? rest : rest.substring(0, queryStart);
        return switch (scheme) {
            case "env" -> new InitMethodUrl(scheme, null, -1, "", query);
            // The path is taken literally (not URI-decoded) so that spaces and the like just work.
            case "file" -> new InitMethodUrl(scheme, null, -1, authorityAndPath.startsWith("/") ? authorityAndPath : "",
                    query);
            case "tcp" -> parseTcp(url, authorityAndPath, query);
            default -> {
                if (!providedSchemes.contains(scheme)) {
                    throw unsupported(url, providedSchemes);
                }
                yield new InitMethodUrl(scheme, null, -1, authorityAndPath, query);
            }
        };
    }

    private static InitMethodUrl parseTcp(String url, String authority, Map<String, String> query) {
        if (authority.endsWith("/")) {
            authority = authority.substring(0, authority.length() - 1);
        }
        URI uri;
        try {
            uri = new URI("tcp://" + authority).parseServerAuthority();
        } catch (URISyntaxException e) {
            throw new RpcException(Code.INVALID_ARGUMENT, "Malformed init method URL '" + url
                    + "': expected tcp://host:port (" + e.getMessage() + ")", e);
        }
        String host = uri.getHost();
        if (host == null || host.isEmpty()) {
            throw new RpcException(Code.INVALID_ARGUMENT, "Malformed init method URL '" + url
                    + "': host missing, expected tcp://host:port");
        }
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        return new InitMethodUrl("tcp", host, uri.getPort(), "", query);
    }

    private static Map<String, String> parseQuery(String url, String query) {
        Map<String, String> params = new LinkedHashMap<>();
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw new RpcException(Code.INVALID_ARGUMENT, "Malformed init method URL '" + url
                        + "': query parameter '" + pair + "' is not name=value");
            }
            params.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                    URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
        }
        return params;
    }

    private static RpcException unsupported(String url, java.util.Set<String> providedSchemes) {
        StringBuilder expected = new StringBuilder("env://, tcp://host:port, file:///path");
        for (String scheme : providedSchemes) {
            expected.append(", ").append(scheme).append("://");
        }
        String hint = providedSchemes.contains("etcd") && providedSchemes.contains("zookeeper") ? ""
                : " (etcd:// and zookeeper:// need ferry-store-etcd or ferry-store-zookeeper on the class path)";
        return new RpcException(Code.INVALID_ARGUMENT, "Unsupported init method '" + url
                + "': expected " + expected + hint);
    }
}
