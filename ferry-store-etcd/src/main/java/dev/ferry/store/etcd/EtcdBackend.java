package dev.ferry.store.etcd;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcException.Code;
import dev.ferry.rpc.spi.StoreBackend;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.support.CloseableClient;
import io.etcd.jetcd.watch.WatchEvent;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link StoreBackend} primitives on one jetcd client: versions are etcd mod revisions,
 * conditional writes are transactions, waits are watches from the revision of the read that found
 * the key absent (so a put between the read and the watch is not missed), ephemeral keys carry a
 * lease granted on first use and kept alive by jetcd until {@link #close()} revokes it.
 */
final class EtcdBackend implements StoreBackend {
    private static final Logger log = LoggerFactory.getLogger(EtcdBackend.class);
    /** How long one request may wait for etcd before the call fails UNAVAILABLE. */
    static final long REQUEST_TIMEOUT_SECONDS = 30;

    private final Client client;
    private final KV kv;
    private final String prefix;
    private final String description;
    private final Duration sessionTtl;
    private final Set<CompletableFuture<?>> inFlight = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    private long leaseId; // guarded by this; 0 until the first ephemeral key
    private CloseableClient keepAlive; // guarded by this

    private EtcdBackend(Client client, String prefix, Duration sessionTtl, String description) {
        this.client = client;
        this.kv = client.getKVClient();
        this.prefix = prefix + "/";
        this.sessionTtl = sessionTtl;
        this.description = description;
    }

    /** A client of {@code endpoints}, once etcd has answered a first request within {@code timeout}. */
    static EtcdBackend connect(List<String> endpoints, String prefix, Duration sessionTtl, Duration timeout) {
        String description = "EtcdStore[" + String.join(",", endpoints) + prefix + "]";
        Client client = Client.builder()
                .endpoints(endpoints.stream().map(e -> "http://" + e).toArray(String[]::new))
                .build();
        EtcdBackend backend = new EtcdBackend(client, prefix, sessionTtl, description);
        try {
            long waitSeconds = timeout.isZero() ? Long.MAX_VALUE : Math.max(1, timeout.toSeconds());
            backend.kv.get(backend.bytes(""), GetOption.builder().withCountOnly(true).build())
                    .get(waitSeconds, TimeUnit.SECONDS);
            return backend;
        } catch (ExecutionException | TimeoutException e) {
            client.close();
            throw new RpcException(Code.RENDEZVOUS_FAILED, "etcd at " + String.join(",", endpoints)
                    + " did not answer within " + timeout + ": " + (e.getCause() != null ? e.getCause() : e), e);
        } catch (InterruptedException e) {
            client.close();
            Thread.currentThread().interrupt();
            throw new RpcException(Code.INTERNAL, "Interrupted while connecting to " + description, e);
        }
    }

    private ByteSequence bytes(String key) {
        return ByteSequence.from(prefix + key, StandardCharsets.UTF_8);
    }

    /**
     * The request's answer, within {@link #REQUEST_TIMEOUT_SECONDS}. jetcd leaves a request pending
     * when its client is closed, so {@link #close()} cancels the requests in flight.
     */
    private <T> T await(CompletableFuture<T> request, String what) {
        inFlight.add(request);
        try {
            if (closed) {
                request.cancel(false);
            }
            return request.get(REQUEST_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (CancellationException e) {
            throw new RpcException(Code.SHUTDOWN, description + " is closed", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            String message = String.valueOf(cause.getMessage());
            Code code = message.contains("too large") ? Code.INVALID_ARGUMENT : Code.UNAVAILABLE;
            throw new RpcException(code, description + " could not " + what + ": " + message, cause);
        } catch (TimeoutException e) {
            request.cancel(true);
            throw new RpcException(Code.UNAVAILABLE, description + " did not " + what + " within "
                    + REQUEST_TIMEOUT_SECONDS + " s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RpcException(Code.INTERNAL, "Interrupted while waiting for " + description + " to " + what, e);
        } finally {
            inFlight.remove(request);
        }
    }

    @Override
    public Versioned read(String key) {
        GetResponse response = await(kv.get(bytes(key)), "read " + key);
        if (response.getKvs().isEmpty()) {
            return null;
        }
        KeyValue found = response.getKvs().get(0);
        return new Versioned(found.getValue().getBytes(), found.getModRevision());
    }

    @Override
    public void write(String key, byte[] value) {
        await(kv.put(bytes(key), ByteSequence.from(value)), "set " + key);
    }

    @Override
    public boolean replace(String key, Versioned current, byte[] value) {
        ByteSequence name = bytes(key);
        Cmp unchanged = current == null
                ? new Cmp(name, Cmp.Op.EQUAL, CmpTarget.createRevision(0))
                : new Cmp(name, Cmp.Op.EQUAL, CmpTarget.modRevision(current.version()));
        return await(kv.txn().If(unchanged).Then(Op.put(name, ByteSequence.from(value), PutOption.DEFAULT)).commit(),
                "update " + key).isSucceeded();
    }

    @Override
    public void writeEphemeral(String key, byte[] value) {
        await(kv.put(bytes(key), ByteSequence.from(value), PutOption.builder().withLeaseId(lease()).build()),
                "set ephemeral " + key);
    }

    /** The session's lease, granted and kept alive on first use. */
    private synchronized long lease() {
        if (leaseId == 0) {
            leaseId = await(client.getLeaseClient().grant(Math.max(1, sessionTtl.toSeconds())), "grant a lease").getID();
            keepAlive = client.getLeaseClient().keepAlive(leaseId, new KeepAliveFailure());
        }
        return leaseId;
    }

    /** Keep-alive failures: the lease may expire and take this process's ephemeral keys with it. */
    private final class KeepAliveFailure implements StreamObserver<LeaseKeepAliveResponse> {
        @Override
        public void onNext(LeaseKeepAliveResponse response) {
        }

        @Override
        public void onError(Throwable t) {
            log.warn("{} stopped keeping its session lease alive; its ephemeral keys go away when it expires: {}",
                    description, t.toString());
        }

        @Override
        public void onCompleted() {
        }
    }

    @Override
    public boolean delete(String key) {
        return await(kv.delete(bytes(key)), "delete " + key).getDeleted() > 0;
    }

    @Override
    public long count() {
        return await(kv.get(bytes(""), GetOption.builder().isPrefix(true).withCountOnly(true).build()),
                "count keys").getCount();
    }

    @Override
    public CompletableFuture<byte[]> whenPresent(String key) {
        CompletableFuture<byte[]> present = new CompletableFuture<>();
        ByteSequence name = bytes(key);
        GetResponse now = await(kv.get(name), "read " + key);
        if (!now.getKvs().isEmpty()) {
            present.complete(now.getKvs().get(0).getValue().getBytes());
            return present;
        }
        WatchOption fromNextRevision = WatchOption.builder().withRevision(now.getHeader().getRevision() + 1).build();
        Watch.Watcher watcher = client.getWatchClient().watch(name, fromNextRevision, Watch.listener(response -> {
            for (WatchEvent event : response.getEvents()) {
                if (event.getEventType() == WatchEvent.EventType.PUT) {
                    present.complete(event.getKeyValue().getValue().getBytes());
                }
            }
        }, failure -> present.completeExceptionally(new RpcException(Code.UNAVAILABLE,
                description + " lost its watch of " + key + ": " + failure, failure))));
        present.whenComplete((value, failure) -> watcher.close());
        return present;
    }

    @Override
    public synchronized void close() {
        closed = true;
        inFlight.forEach(request -> request.cancel(false));
        if (keepAlive != null) {
            keepAlive.close();
            keepAlive = null;
            try {
                // Revoking deletes the ephemeral keys now instead of a TTL from now.
                client.getLeaseClient().revoke(leaseId).get(5, TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException e) {
                log.warn("{} could not revoke its session lease; its ephemeral keys go away in {}: {}",
                        description, sessionTtl, e.toString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        client.close();
    }

    @Override
    public String toString() {
        return description;
    }
}
