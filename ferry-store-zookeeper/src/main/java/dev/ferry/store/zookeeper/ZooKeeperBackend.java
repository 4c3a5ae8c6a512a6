package dev.ferry.store.zookeeper;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcException.Code;
import dev.ferry.rpc.spi.StoreBackend;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

/**
 * The {@link StoreBackend} primitives on one Curator client: a key is the znode {@code path/k<key
 * URL-encoded>} (so {@code /} and any character fit in one flat level), versions are znode data
 * versions, ephemeral keys are ephemeral znodes of this client's session. A persistent write to an
 * ephemeral znode replaces it by a persistent one in one transaction, as etcd's put without lease does.
 */
final class ZooKeeperBackend implements StoreBackend {
    /** ZooKeeper refuses requests beyond jute.maxbuffer (1 MiB by default), by dropping the connection. */
    static final int MAX_VALUE_BYTES = 1_000_000;

    private final CuratorFramework client;
    private final String root;
    private final String description;

    private ZooKeeperBackend(CuratorFramework client, String root, String description) {
        this.client = client;
        this.root = root;
        this.description = description;
    }

    /** A started client of {@code servers}, once its session is established within {@code timeout}. */
    static ZooKeeperBackend connect(String servers, String root, Duration sessionTimeout, Duration timeout) {
        String description = "ZooKeeperStore[" + servers + root + "]";
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(servers)
                .sessionTimeoutMs((int) Math.min(Integer.MAX_VALUE, sessionTimeout.toMillis()))
                .connectionTimeoutMs((int) Math.min(15_000, Math.max(1_000, sessionTimeout.toMillis())))
                .retryPolicy(new ExponentialBackoffRetry(100, 5, 2_000))
                .build();
        client.start();
        try {
            boolean connected = timeout.isZero() ? blockForever(client)
                    : client.blockUntilConnected((int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toSeconds())),
                            TimeUnit.SECONDS);
            if (!connected) {
                client.close();
                throw new RpcException(Code.RENDEZVOUS_FAILED, "ZooKeeper at " + servers + " did not answer within "
                        + timeout);
            }
        } catch (InterruptedException e) {
            client.close();
            Thread.currentThread().interrupt();
            throw new RpcException(Code.INTERNAL, "Interrupted while connecting to " + description, e);
        }
        return new ZooKeeperBackend(client, root, description);
    }

    private static boolean blockForever(CuratorFramework client) throws InterruptedException {
        client.blockUntilConnected();
        return true;
    }

    private String path(String key) {
        return root + "/k" + URLEncoder.encode(key, StandardCharsets.UTF_8);
    }

    private static byte[] checked(String key, byte[] value) {
        if (value.length > MAX_VALUE_BYTES) {
            throw new RpcException(Code.INVALID_ARGUMENT, "value of " + key + " is " + value.length
                    + " bytes; a ZooKeeper store holds at most " + MAX_VALUE_BYTES + " per key");
        }
        return value;
    }

    private RpcException failure(String what, Exception e) {
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
            return new RpcException(Code.INTERNAL, "Interrupted while " + description + " tried to " + what, e);
        }
        if (e instanceof RpcException rpc) {
            return rpc;
        }
        return new RpcException(Code.UNAVAILABLE, description + " could not " + what + ": " + e, e);
    }

    @Override
    public Versioned read(String key) {
        try {
            Stat stat = new Stat();
            byte[] value = client.getData().storingStatIn(stat).forPath(path(key));
            return new Versioned(value == null ? new byte[0] : value, stat.getVersion());
        } catch (KeeperException.NoNodeException e) {
            return null;
        } catch (Exception e) {
            throw failure("read " + key, e);
        }
    }

    @Override
    public void write(String key, byte[] value) {
        checked(key, value);
        String path = path(key);
        try {
            while (true) {
                try {
                    Stat stat = client.setData().forPath(path, value);
                    if (stat.getEphemeralOwner() == 0 || recreate(path, stat.getVersion(), value, CreateMode.PERSISTENT)) {
                        return;
                    }
                } catch (KeeperException.NoNodeException absent) {
                    try {
                        client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(path, value);
                        return;
                    } catch (KeeperException.NodeExistsException raced) {
                        // created meanwhile: set it
                    }
                }
            }
        } catch (Exception e) {
            throw failure("set " + key, e);
        }
    }

    /**
     * Replaces the znode at {@code version} by one of {@code mode} holding {@code value}, in one
     * transaction (a znode cannot change between ephemeral and persistent); false if it changed meanwhile.
     */
    private boolean recreate(String path, int version, byte[] value, CreateMode mode) throws Exception {
        try {
            client.transaction().forOperations(
                    client.transactionOp().delete().withVersion(version).forPath(path),
                    client.transactionOp().create().withMode(mode).forPath(path, value));
            return true;
        } catch (KeeperException.BadVersionException | KeeperException.NoNodeException changed) {
            return false;
        }
    }

    @Override
    public boolean replace(String key, Versioned current, byte[] value) {
        checked(key, value);
        String path = path(key);
        try {
            if (current == null) {
                client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(path, value);
                return true;
            }
            Stat stat = client.setData().withVersion((int) current.version()).forPath(path, value);
            if (stat.getEphemeralOwner() != 0) {
                // The update itself happened; if another writer changed the key since, its write is the newer one.
                recreate(path, stat.getVersion(), value, CreateMode.PERSISTENT);
            }
            return true;
        } catch (KeeperException.NodeExistsException | KeeperException.BadVersionException
                 | KeeperException.NoNodeException changed) {
            return false;
        } catch (Exception e) {
            throw failure("update " + key, e);
        }
    }

    @Override
    public void writeEphemeral(String key, byte[] value) {
        checked(key, value);
        String path = path(key);
        try {
            long session = client.getZookeeperClient().getZooKeeper().getSessionId();
            while (true) {
                try {
                    client.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(path, value);
                    return;
                } catch (KeeperException.NodeExistsException exists) {
                    Stat stat = client.checkExists().forPath(path);
                    if (stat == null) {
                        continue;
                    }
                    if (stat.getEphemeralOwner() != session) {
                        if (recreate(path, stat.getVersion(), value, CreateMode.EPHEMERAL)) {
                            return;
                        }
                        continue; // changed meanwhile: try again
                    }
                    try {
                        client.setData().withVersion(stat.getVersion()).forPath(path, value);
                        return;
                    } catch (KeeperException.BadVersionException | KeeperException.NoNodeException changed) {
                        // changed meanwhile: try again
                    }
                }
            }
        } catch (Exception e) {
            throw failure("set ephemeral " + key, e);
        }
    }

    @Override
    public boolean delete(String key) {
        try {
            client.delete().forPath(path(key));
            return true;
        } catch (KeeperException.NoNodeException e) {
            return false;
        } catch (Exception e) {
            throw failure("delete " + key, e);
        }
    }

    @Override
    public long count() {
        try {
            Stat stat = client.checkExists().forPath(root);
            return stat == null ? 0 : stat.getNumChildren();
        } catch (Exception e) {
            throw failure("count keys", e);
        }
    }

    @Override
    public CompletableFuture<byte[]> whenPresent(String key) {
        KeyWatch watch = new KeyWatch(key, path(key));
        watch.arm();
        return watch.present;
    }

    /**
     * Reads a key and, while it is absent, watches for its creation: getData (no watch is left on
     * an absent node), else exists with a watch, which either finds it created meanwhile or fires
     * later. ZooKeeper's watches are one-shot, so one left behind by a cancelled wait fires once and
     * is ignored.
     */
    private final class KeyWatch implements Watcher, BackgroundCallback {
        final CompletableFuture<byte[]> present = new CompletableFuture<>();
        private final String key;
        private final String path;

        KeyWatch(String key, String path) {
            this.key = key;
            this.path = path;
        }

        void arm() {
            if (present.isDone()) {
                return;
            }
            try {
                client.getData().inBackground(this).forPath(path);
            } catch (Exception e) {
                present.completeExceptionally(failure("watch " + key, e));
            }
        }

        @Override
        public void processResult(CuratorFramework framework, CuratorEvent event) throws Exception {
            KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
            switch (event.getType()) {
                case GET_DATA -> {
                    if (code == KeeperException.Code.OK) {
                        present.complete(event.getData() == null ? new byte[0] : event.getData());
                    } else if (code == KeeperException.Code.NONODE) {
                        client.checkExists().usingWatcher(this).inBackground(this).forPath(path);
                    } else {
                        present.completeExceptionally(failure("watch " + key, KeeperException.create(code, path)));
                    }
                }
                case EXISTS -> {
                    if (code == KeeperException.Code.OK) {
                        arm(); // created between the read and the watch
                    } else if (code != KeeperException.Code.NONODE) {
                        present.completeExceptionally(failure("watch " + key, KeeperException.create(code, path)));
                    }
                }
                default -> { }
            }
        }

        @Override
        public void process(WatchedEvent event) {
            if (event.getType() == Event.EventType.NodeCreated || event.getType() == Event.EventType.NodeDataChanged) {
                arm();
            }
        }
    }

    @Override
    public void close() {
        client.close(); // ends the session: ZooKeeper deletes its ephemeral znodes now
    }

    @Override
    public String toString() {
        return description;
    }
}
