/**
 * Rendezvous key-value stores: how the processes of a Ferry job find each other before RPC starts.
 *
 * <pre>
 *   init method URL ──▶ {@link dev.ferry.rpc.store.Rendezvous} ──▶ {@link dev.ferry.rpc.store.RendezvousResult}
 *                                                        (store, rank, world size)
 *       env:// , tcp://host:port ──▶ {@link dev.ferry.rpc.store.TcpStore} (+ {@link dev.ferry.rpc.store.TcpStoreServer} on rank 0)
 *       file:///path             ──▶ {@link dev.ferry.rpc.store.FileStore}
 *       etcd://, zookeeper://    ──▶ a {@link dev.ferry.rpc.spi.StoreProvider} on the class path
 *                                    (ferry-store-etcd, ferry-store-zookeeper) ──▶ {@link dev.ferry.rpc.spi.BackedStore}
 *
 *   {@link dev.ferry.rpc.store.PrefixStore} ── a namespace inside any of them
 * </pre>
 *
 * <p>All stores implement {@link dev.ferry.rpc.store.Store}, the equivalent of PyTorch c10d's
 * {@code Store}: string keys, byte-array values, blocking {@code get}/{@code waitFor} with
 * timeouts, an atomic counter and compare-and-set. Failures are {@link dev.ferry.rpc.RpcException}s;
 * timed-out waits are {@link dev.ferry.rpc.store.StoreTimeoutException}s naming the missing keys.
 */
package dev.ferry.rpc.store;
