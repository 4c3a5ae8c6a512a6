package dev.ferry.rpc.internal.observe;

import dev.ferry.rpc.JmxRegistration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.InstanceAlreadyExistsException;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.MBeanServer;
import javax.management.MBeanServerFactory;
import javax.management.ObjectName;
import javax.management.ReflectionException;

/**
 * An RPC agent's debug info as a JMX MBean, {@code dev.ferry.rpc:type=RpcAgent,name="<worker>"}: one
 * read-only string attribute per debug-info key ({@code agent.state}, {@code
 * agent.client_active_calls}, {@code rref.num_owner_rrefs}, ...), read afresh on every access, so JConsole,
 * VisualVM or a JMX exporter can watch a live worker. A second agent of the same name in one JVM
 * (tests, in-process groups) gets {@code ,instance=2} and so on. Agents register where the JVM already
 * runs its platform MBean server, or always on request ({@link JmxRegistration}).
 *
 * <pre>
 *   ObjectName name = new ObjectName("dev.ferry.rpc:type=RpcAgent,name=\"worker0\"");
 *   Object state = ManagementFactory.getPlatformMBeanServer().getAttribute(name, "agent.state");  // "RUNNING"
 * </pre>
 *
 * <p>Thread-safe: every read asks the agent.
 */
public final class AgentMBean implements DynamicMBean {
    /** The domain and type of every agent's name. */
    public static final String NAME_PREFIX = "dev.ferry.rpc:type=RpcAgent";
    private static final Logger log = LoggerFactory.getLogger(AgentMBean.class);

    private final String worker;
    private final Supplier<Map<String, String>> debugInfo;

    private AgentMBean(String worker, Supplier<Map<String, String>> debugInfo) {
        this.worker = worker;
        this.debugInfo = debugInfo;
    }

    /**
     * Registers {@code worker}'s debug info with the platform MBean server; closing the result
     * unregisters it. Never throws: where JMX refuses, the agent runs without its MBean (logged).
     */
    public static AutoCloseable register(String worker, Supplier<Map<String, String>> debugInfo) {
        return register(worker, debugInfo, JmxRegistration.ALWAYS);
    }

    /**
     * As {@link #register(String, Supplier)} when {@code when} says so: {@code IF_RUNNING} registers
     * only if the platform MBean server already exists, and never creates it.
     */
    public static AutoCloseable register(String worker, Supplier<Map<String, String>> debugInfo, JmxRegistration when) {
        Objects.requireNonNull(debugInfo, "debugInfo");
        if (when == JmxRegistration.NEVER
                || (when == JmxRegistration.IF_RUNNING && !platformServerRunning())) {
            log.debug("{}: no JMX MBean for the agent (jmx {})", worker, when);
            return () -> { };
        }
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            AgentMBean bean = new AgentMBean(worker, debugInfo);
            for (int instance = 1; ; instance++) {
                ObjectName name = new ObjectName(NAME_PREFIX + ",name=" + ObjectName.quote(worker)
                        + (instance == 1 ? "" : ",instance=" + instance));
                try {
                    ObjectName registered = server.registerMBean(bean, name).getObjectName();
                    return () -> unregister(server, registered);
                } catch (InstanceAlreadyExistsException taken) {
                    // another agent of this name in this JVM: try the next instance number
                }
            }
        } catch (JMException | RuntimeException e) {
            log.debug("{}: no JMX MBean for the agent: {}", worker, e.toString());
            return () -> { };
        }
    }

    /**
     * Whether the JVM's platform MBean server exists, found without creating it: it is the server
     * {@link MBeanServerFactory} made that holds the platform's own {@code java.lang:type=Runtime}.
     */
    static boolean platformServerRunning() {
        try {
            ObjectName runtime = new ObjectName(ManagementFactory.RUNTIME_MXBEAN_NAME);
            for (MBeanServer server : MBeanServerFactory.findMBeanServer(null)) {
                if (server.isRegistered(runtime)) {
                    return true;
                }
            }
            return false;
        } catch (JMException | RuntimeException e) {
            return false;
        }
    }

    private static void unregister(MBeanServer server, ObjectName name) {
        try {
            server.unregisterMBean(name);
        } catch (InstanceNotFoundException gone) {
            // unregistered already
        } catch (JMException e) {
            log.debug("cannot unregister {}: {}", name, e.toString());
        }
    }

    @Override
    public Object getAttribute(String attribute) throws AttributeNotFoundException {
        String value = debugInfo.get().get(attribute);
        if (value == null) {
            throw new AttributeNotFoundException(worker + "'s debug info has no " + attribute);
        }
        return value;
    }

    @Override
    public AttributeList getAttributes(String[] attributes) {
        Map<String, String> info = debugInfo.get();
        AttributeList list = new AttributeList();
        for (String attribute : attributes) {
            String value = info.get(attribute);
            if (value != null) {
                list.add(new Attribute(attribute, value));
            }
        }
        return list;
    }

    @Override
    public void setAttribute(Attribute attribute) throws AttributeNotFoundException {
        throw new AttributeNotFoundException(attribute.getName() + " is read-only");
    }

    @Override
    public AttributeList setAttributes(AttributeList attributes) {
        return new AttributeList(); // all read-only: none set
    }

    @Override
    public Object invoke(String action, Object[] params, String[] signature) throws ReflectionException {
        throw new ReflectionException(new NoSuchMethodException(action), "an agent's MBean has no operations");
    }

    /** The attributes are the debug info's keys now (per-peer keys come and go with connections). */
    @Override
    public MBeanInfo getMBeanInfo() {
        MBeanAttributeInfo[] attributes = debugInfo.get().keySet().stream()
                .map(key -> new MBeanAttributeInfo(key, String.class.getName(), key, true, false, false))
                .toArray(MBeanAttributeInfo[]::new);
        return new MBeanInfo(AgentMBean.class.getName(), "Ferry RPC agent " + worker + ": debug info",
                attributes, null, null, null);
    }
}
