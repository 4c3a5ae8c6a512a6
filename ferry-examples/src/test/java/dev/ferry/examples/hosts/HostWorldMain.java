package dev.ferry.examples.hosts;

import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.store.Rendezvous;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.stream.Collectors;

/**
 * A worker of a world spread over test hosts: rank 0 asks every other worker, by RPC, for the
 * addresses of the host it runs on, and prints {@code worker1 runs at 198.18.N.2}.
 */
public final class HostWorldMain {
    private HostWorldMain() {
    }

    /** The IPv4 addresses of this host's eth0 (a test host's only interface besides loopback). */
    public static String hostAddress() throws SocketException {
        NetworkInterface eth0 = NetworkInterface.getByName("eth0");
        return eth0 == null ? "no eth0" : eth0.inetAddresses().filter(a -> a.getAddress().length == 4)
                .map(InetAddress::getHostAddress).collect(Collectors.joining(","));
    }

    public static void main(String[] args) throws Exception {
        Rpc.initRpc("worker" + Rendezvous.environmentRank().orElse(0));
        try {
            WorkerInfo me = Rpc.getWorkerInfo();
            if (me.id() == 0) {
                System.out.println("worker0 runs at " + hostAddress());
                for (WorkerInfo peer : Rpc.getWorkerInfos()) {
                    if (peer.id() != 0) {
                        System.out.println(peer.name() + " runs at " + Rpc.rpcSync(peer.name(), HostWorldMain::hostAddress));
                    }
                }
            }
        } finally {
            Rpc.shutdown();
        }
    }
}
