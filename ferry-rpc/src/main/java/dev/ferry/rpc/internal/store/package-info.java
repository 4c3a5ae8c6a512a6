/**
 * Implementation of {@link dev.ferry.rpc.store}: the TCP store's wire protocol ({@link
 * dev.ferry.rpc.internal.store.StoreProtocol}), server ({@link dev.ferry.rpc.internal.store.StoreServer})
 * and multiplexed client ({@link dev.ferry.rpc.internal.store.StoreClient}), and the file store's
 * log ({@link dev.ferry.rpc.internal.store.FileStoreLog}). Not API: may change without notice.
 */
package dev.ferry.rpc.internal.store;
