package dev.ferry.rpc.spi;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcException.Code;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * An init method URL of a {@link StoreProvider}'s scheme, parsed once for every provider:
 * {@code scheme://host:port[,host:port...][/path][?name=value&...]}, e.g.
 * {@code etcd://10.0.0.5:2379,10.0.0.6:2379/ferry/job-42?session_ttl_s=5}.
 *
 * @param url the URL as given
 * @param scheme the scheme, without {@code ://}
 * @param endpoints the {@code host:port} list, at least one (an IPv6 host in brackets)
 * @param path the path without its trailing {@code /}; empty if none
 * @param parameters the decoded query parameters, {@code rank} and {@code world_size} included
 */
public record StoreAddress(String url, String scheme, List<String> endpoints, String path,
                           Map<String, String> parameters) {
    private static final Pattern ENDPOINT = Pattern.compile("[A-Za-z0-9._-]+:\\d{1,5}|\\[[0-9a-fA-F:.]+]:\\d{1,5}");
    /** The parameters the rendezvous itself reads, which every provider accepts. */
    private static final Set<String> RENDEZVOUS_PARAMETERS = Set.of("rank", "world_size");

    public StoreAddress {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(scheme, "scheme");
        endpoints = List.copyOf(endpoints);
        Objects.requireNonNull(path, "path");
        parameters = Map.copyOf(parameters);
    }

    /**
     * @throws RpcException INVALID_ARGUMENT if the URL is not of that form
     */
    public static StoreAddress parse(String url) {
        int schemeEnd = url.indexOf("://");
        if (schemeEnd <= 0) {
            throw malformed(url, "expected scheme://host:port[/path]");
        }
        String scheme = url.substring(0, schemeEnd);
        String rest = url.substring(schemeEnd + 3);
        int queryStart = rest.indexOf('?');
        String query = queryStart < 0 ? "" : rest.substring(queryStart + 1);
        String authorityAndPath = queryStart < 0 ? rest : rest.substring(0, queryStart);
        int pathStart = authorityAndPath.indexOf('/');
        String authority = pathStart < 0 ? authorityAndPath : authorityAndPath.substring(0, pathStart);
        String path = pathStart < 0 ? "" : authorityAndPath.substring(pathStart);
        while (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        List<String> endpoints = new ArrayList<>();
        for (String endpoint : authority.split(",")) {
            if (!ENDPOINT.matcher(endpoint).matches()) {
                throw malformed(url, "endpoint '" + endpoint + "' is not host:port");
            }
            endpoints.add(endpoint);
        }
        Map<String, String> parameters = new LinkedHashMap<>();
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw malformed(url, "query parameter '" + pair + "' is not name=value");
            }
            parameters.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                    URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
        }
        return new StoreAddress(url, scheme, endpoints, path, parameters);
    }

    /**
     * Refuses parameters that neither the rendezvous ({@code rank}, {@code world_size}) nor the
     * provider ({@code known}) reads, so a misspelt option fails instead of being ignored.
     */
    public StoreAddress requireKnownParameters(Set<String> known) {
        Set<String> unknown = new TreeSet<>(parameters.keySet());
        unknown.removeAll(RENDEZVOUS_PARAMETERS);
        unknown.removeAll(known);
        if (!unknown.isEmpty()) {
            Set<String> all = new TreeSet<>(known);
            all.addAll(RENDEZVOUS_PARAMETERS);
            throw malformed(url, "unknown query parameter(s) " + unknown + "; known: " + all);
        }
        return this;
    }

    /** The parameter as a whole number, or {@code otherwise} when absent. */
    public long longParameter(String name, long otherwise) {
        String value = parameters.get(name);
        if (value == null) {
            return otherwise;
        }
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw malformed(url, "query parameter " + name + " must be a whole number, got '" + value + "'");
        }
    }

    private static RpcException malformed(String url, String why) {
        return new RpcException(Code.INVALID_ARGUMENT, "Malformed init method URL '" + url + "': " + why);
    }
}
