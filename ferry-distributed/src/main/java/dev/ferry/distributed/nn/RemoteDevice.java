package dev.ferry.distributed.nn;

import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcException;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where a {@link RemoteModule} lives, parsed as PyTorch's {@code _remote_device}:
 * {@code "<worker>/<device>"}, {@code "rank:<rank>/<device>"}, or a worker alone (its device
 * {@code cpu}). Ferry's tensors are CPU-only, so a device other than {@code cpu} is an error, not
 * ignored. Immutable.
 *
 * <pre>
 *   "worker1/cpu"  worker1          "rank:1/cpu"  the worker of rank 1
 *   "worker1"      worker1          "rank:1"      the worker of rank 1
 *   "worker1/cuda:0", "cpu", "/cpu", "a/b/c"      INVALID_ARGUMENT, saying why
 * </pre>
 */
record RemoteDevice(String worker, Integer rank) {
    private static final String CPU = "cpu";
    // torch.device's syntax: one of its device types and an optional index ("cuda", "cuda:1"), or an
    // index alone; anything else is a worker name, as PyTorch reads it.
    private static final Pattern DEVICE = Pattern.compile("(?:cpu|cuda|ipu|xpu|mkldnn|opengl|opencl|ideep|hip|ve|fpga"
            + "|ort|xla|lazy|vulkan|mps|meta|hpu|mtia|privateuseone)(?::\\d+)?|\\d+");
    private static final Pattern RANK = Pattern.compile("rank:(\\d+)");

    static RemoteDevice parse(String remoteDevice) {
        if (remoteDevice == null) {
            throw invalid("remote device is null");
        }
        String[] fields = remoteDevice.split("/", -1);
        if (fields.length > 2 || fields[0].isEmpty()) {
            throw invalid("Could not parse remote_device: " + remoteDevice + ". The valid format is "
                    + "'<workername>/<device>' or 'rank:<rank>/<device>'");
        }
        String device = fields.length == 2 ? fields[1] : CPU;
        if (fields.length == 1 && DEVICE.matcher(fields[0]).matches()) {
            // PyTorch reads a lone "cpu" or "cuda:1" as a device on no worker, and then fails.
            throw invalid("remote device '" + remoteDevice + "' names a device but no worker: use '<workername>/"
                    + remoteDevice + "' or 'rank:<rank>/" + remoteDevice + "'");
        }
        if (!DEVICE.matcher(device).matches()) {
            throw invalid("Invalid device string: '" + device + "' in remote device '" + remoteDevice + "'");
        }
        if (!CPU.equals(device)) {
            throw invalid("device '" + device + "' of remote device '" + remoteDevice + "' is not available: "
                    + "Ferry's tensors are CPU-only, so the only device is \"cpu\"");
        }
        Matcher rank = RANK.matcher(fields[0]);
        if (rank.matches()) {
            return new RemoteDevice(null, Integer.valueOf(rank.group(1)));
        }
        if (fields[0].contains(":")) {
            throw invalid("Could not parse remote_device: " + remoteDevice + ". A worker name with ':' must be "
                    + "'rank:<rank>'");
        }
        return new RemoteDevice(fields[0], null);
    }

    /** The name of the worker this device is on, in {@code agent}'s group. */
    String workerName(RpcAgent agent) {
        return worker != null ? worker : agent.getWorkerInfo(rank).name();
    }

    private static RpcException invalid(String message) {
        return new RpcException(RpcException.Code.INVALID_ARGUMENT, message);
    }
}
