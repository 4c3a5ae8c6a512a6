package dev.ferry.rpc.internal.serial;

import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.MessageContext;
import dev.ferry.rpc.spi.SerializationExtension;
import dev.ferry.rpc.spi.TypeRegistry;
import org.apache.fory.Fory;
import org.apache.fory.config.ForyBuilder;
import org.apache.fory.exception.InsecureException;
import org.apache.fory.memory.MemoryBuffer;
import org.apache.fory.resolver.TypeChecker;
import org.apache.fory.resolver.TypeResolver;
import org.apache.fory.serializer.BufferCallback;
import org.apache.fory.serializer.BufferObject;
import org.apache.fory.serializer.Serializer;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Encodes and decodes values with Apache Fory, configured for untrusted peers: classes that
 * arrive by name pass the class policy (an agent's is a {@link ClassPolicy}); Ferry's own wire
 * types and the extensions' types have explicit ids; depth and size are bounded; a string header
 * with an impossible coder is refused (its pools' comment says how). Binary buffers of at least
 * {@code outOfBandThreshold} bytes (primitive arrays, {@link ByteBuffer}s, custom buffer objects)
 * are kept out of the in-band stream.
 *
 * <p>This class is thread-safe: it holds two pools of Fory instances ({@link ForyPool}), one that
 * encodes and one that decodes.
 */
public final class ObjectCodec {
    /**
     * The codec encoding or decoding on this thread. Serializers that need per-agent state (RRefs)
     * read its attachment and agent through it: Fory may share serializer instances between its
     * instances, so binding state into a serializer would mix agents living in one JVM.
     */
    private static final ThreadLocal<ObjectCodec> CURRENT = new ThreadLocal<>();
    /**
     * The header entries of the message at work on this thread, for {@link MessageContext#current()},
     * which builds its record only when a serializer asks (most calls have no serializer that does).
     */
    private static final ThreadLocal<CallHeaders> MESSAGE = new ThreadLocal<>();

    /**
     * The bit of Fory's first byte saying the stream was written with a buffer callback (Fory 1.6:
     * {@code headerBitmap | 2}). Ferry always passes one, so that large buffers can go out of band;
     * but Fory's reader takes a slow path for any header other than its plain one (it checks the
     * flags and formats its error message's arguments, a hex string, on every message), so a value
     * without buffers is sent with the bit cleared. Pinned by {@code ObjectCodecTest}.
     */
    static final int OUT_OF_BAND_FLAG = 0x02;
    /**
     * The class in Fory's refusals: "Class X is forbidden for deserialization", "class X is not
     * registered", "X hit disallowed list" (Fory's own list of dangerous classes, e.g. Thread).
     */
    private static final Pattern REFUSED_CLASS = Pattern.compile(
            "^Class (\\S+) is forbidden|^(?:class |interface )?(\\S+) is not registered|^(\\S+) hit disallowed list");

    /**
     * Fory instances that encode, and others that decode, configured apart for strings. A string's
     * header carries two coder bits (0 Latin-1, 1 UTF-16, 2 UTF-8); Fory 1.6's plain reader takes
     * them as they come, and the 3 no encoder writes builds a {@code String} whose
     * {@code length()} disagrees with its characters (concatenating it throws). The reader of
     * Fory's compressed form refuses the 3, and every string read takes it (the string serializer
     * and the serializers Fory generates read by the same setting), so the decoders use it
     * ({@code CorruptStringsTest}). It reads exactly what the plain writer writes (a string's own
     * Latin-1 or UTF-16 bytes). The compressed writer is not used: it writes mostly-ASCII text with
     * other characters as UTF-8, and refuses such a text with an unpaired surrogate, a valid Java
     * string ({@code ObjectCodecTest}); so the encoders write the plain form, the bytes as before.
     */
    private final ForyPool encoders;
    private final ForyPool decoders;
    /** The handles of the functions peers bound on this worker, which their calls name. */
    private final FunctionHandles handles = new FunctionHandles();
    private final int outOfBandThreshold;
    private final Object attachment;
    private final RpcAgent agent;

    public ObjectCodec(TypeChecker policy, List<SerializationExtension> extensions, int outOfBandThreshold) {
        this(policy, extensions, outOfBandThreshold, registry -> { }, null, 1L << 30);
    }

    /**
     * With {@code internal}: registrations of Ferry's own, which may use reserved ids; and
     * {@code attachment}: what serializers see as {@link #currentAttachment()} while this codec works.
     */
    public ObjectCodec(TypeChecker policy, List<SerializationExtension> extensions, int outOfBandThreshold,
                       SerializationExtension internal, Object attachment, long maxMessageBytes) {
        this(policy, extensions, outOfBandThreshold, internal, attachment, maxMessageBytes, null);
    }

    /** With {@code agent}: the agent whose messages this codec encodes and decodes ({@link MessageContext#agent()}). */
    public ObjectCodec(TypeChecker policy, List<SerializationExtension> extensions, int outOfBandThreshold,
                       SerializationExtension internal, Object attachment, long maxMessageBytes, RpcAgent agent) {
        this.outOfBandThreshold = outOfBandThreshold;
        this.attachment = attachment;
        this.agent = agent;
        Registry registry = new Registry();
        WireTypes.registerAll(registry);
        internal.register(registry);
        for (SerializationExtension extension : extensions) {
            registry.userMode = true;
            registry.ferryModule = extension.getClass().getName().startsWith("dev.ferry.");
            extension.register(registry);
        }
        Consumer<Fory> registrations = registry.apply();
        this.encoders = new ForyPool(builder(policy, maxMessageBytes).withStringCompressed(false), registrations);
        this.decoders = new ForyPool(builder(policy, maxMessageBytes).withStringCompressed(true), registrations);
    }

    private static ForyBuilder builder(TypeChecker policy, long maxMessageBytes) {
        return new ForyBuilder()
                .withXlang(false)
                .withRefTracking(true)
                .requireClassRegistration(false)
                .suppressClassRegistrationWarnings(true)
                .withTypeChecker(policy)
                .withAsyncCompilation(false)
                .withMaxDepth(256)
                // a decoded graph may be as large as the largest message (Fory's default, 128 MiB,
                // refused a 128 MiB array that arrived out of band)
                .withMaxGraphMemoryBytes(2 * maxMessageBytes)
                .withName("ferry");
    }

    /** Encodes {@code value}; failures are {@link RpcException}s with code SERIALIZATION_ERROR. */
    public EncodedPayload encode(Object value) {
        return encode(value, null);
    }

    /**
     * Encodes {@code value} as the payload of a message with {@code headers} (which serializers see
     * through {@link MessageContext#current()}; null for none).
     */
    public EncodedPayload encode(Object value, CallHeaders headers) {
        BufferSorter buffers = new BufferSorter(outOfBandThreshold);
        ObjectCodec previous = CURRENT.get();
        CURRENT.set(this);
        CallHeaders previousHeaders = MESSAGE.get();
        MESSAGE.set(headers);
        try {
            byte[] inBand = encoders.execute(f -> f.serialize(value, buffers));
            if (!buffers.met) {
                // No binary buffer in the value: the stream is what Fory writes without a callback
                // but for this flag, and clearing it lets the decoder take Fory's plain path.
                inBand[0] &= (byte) ~OUT_OF_BAND_FLAG;
            }
            return new EncodedPayload(inBand, buffers.outOfBand);
        } catch (RpcException e) {
            throw e;
        } catch (RuntimeException | StackOverflowError e) {
            RpcException refused = thrownBySerializer(e);
            if (refused != null) {
                // A serializer refused a value that is unusable rather than unencodable (an RRef
                // deleted, whose creation failed or whose owner is gone): the caller learns that, in
                // the words and code any other use of it reports, not as a serialization failure.
                throw refused.rethrowable();
            }
            throw new RpcException(RpcException.Code.SERIALIZATION_ERROR,
                    "cannot encode " + whatIsEncoded(value) + ": " + describe(e, e.getMessage()), e);
        } finally {
            CURRENT.set(previous);
            MESSAGE.set(previousHeaders);
        }
    }

    /**
     * Decodes a value. The buffers are only read during the call; nothing decoded aliases them.
     */
    public Object decode(ByteBuffer inBand, List<ByteBuffer> outOfBand) {
        return decode(inBand, outOfBand, (CallHeaders) null);
    }

    /** Decodes the payload of a message with {@code headers} (see {@link #encode(Object, CallHeaders)}). */
    public Object decode(ByteBuffer inBand, List<ByteBuffer> outOfBand, CallHeaders headers) {
        ObjectCodec previous = CURRENT.get();
        CURRENT.set(this);
        CallHeaders previousHeaders = MESSAGE.get();
        MESSAGE.set(headers);
        try {
            MemoryBuffer stream = MemoryBuffer.fromByteBuffer(inBand);
            if (outOfBand.isEmpty() && inBand.hasRemaining()
                    && (inBand.get(inBand.position()) & OUT_OF_BAND_FLAG) == 0) {
                return decoders.execute(f -> f.deserialize(stream));
            }
            // Streams written with a buffer callback (the flag set) require the list, even empty.
            List<MemoryBuffer> buffers = outOfBand.isEmpty() ? List.of() : new ArrayList<>(outOfBand.size());
            for (ByteBuffer buffer : outOfBand) {
                buffers.add(MemoryBuffer.fromByteBuffer(buffer));
            }
            return decoders.execute(f -> f.deserialize(stream, buffers));
        } catch (RpcException e) {
            throw e;
        } catch (RuntimeException | StackOverflowError e) {
            throw new RpcException(RpcException.Code.SERIALIZATION_ERROR,
                    "cannot decode a message: " + describe(e, innermostMessage(e)), e);
        } finally {
            CURRENT.set(previous);
            MESSAGE.set(previousHeaders);
        }
    }

    /** The message being encoded or decoded on this thread, or null. */
    public static MessageContext currentMessage() {
        CallHeaders headers = MESSAGE.get();
        ObjectCodec codec = CURRENT.get();
        return headers == null || codec == null ? null : new MessageContext(codec.agent, headers);
    }

    /**
     * Gives peers a handle for {@code function}, which their calls may carry instead of its identity
     * (see {@link FunctionHandles}); the caller has resolved the function here and it is allowed.
     */
    public int bind(FunctionRef function) {
        return handles.bind(function);
    }

    /** How many function handles this worker has given out. */
    public int boundFunctions() {
        return handles.size();
    }

    /** The function bound as {@code handle} on the worker whose codec decodes on this thread. */
    static FunctionRef.Identity boundFunction(int handle) {
        ObjectCodec codec = CURRENT.get();
        if (codec == null) {
            throw new IllegalStateException("function handle " + handle + " read outside of a codec");
        }
        return codec.handles.identity(handle);
    }

    /** The attachment of the codec working on this thread, or null outside encode and decode. */
    public static Object currentAttachment() {
        ObjectCodec codec = CURRENT.get();
        return codec == null ? null : codec.attachment;
    }

    /** Decodes a value expected to be of {@code type}, failing clearly for anything else. */
    public <T> T decode(ByteBuffer inBand, List<ByteBuffer> outOfBand, Class<T> type) {
        return decode(inBand, outOfBand, (CallHeaders) null, type);
    }

    /** Decodes the payload of {@code message}, expected to be of {@code type}. */
    public <T> T decode(ByteBuffer inBand, List<ByteBuffer> outOfBand, CallHeaders headers, Class<T> type) {
        Object value = decode(inBand, outOfBand, headers);
        if (!type.isInstance(value)) {
            throw new RpcException(RpcException.Code.SERIALIZATION_ERROR,
                    "expected a " + type.getName() + " but the message held " + typeName(value)
                            + " (is the class missing or different on this worker?)");
        }
        return type.cast(value);
    }

    /** What went wrong: the class policy's refusal in Ferry's words, else {@code otherwise}. */
    private static String describe(Throwable e, String otherwise) {
        for (Throwable cause = e; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause instanceof InsecureException && cause.getMessage() != null) {
                Matcher refused = REFUSED_CLASS.matcher(cause.getMessage());
                String name = refused.find() ? firstGroup(refused) : "a class";
                return "the class policy refuses " + name + ": only the JDK's value types, the application's classes"
                        + " (RpcBackendOptions.Builder.applicationPackage or FERRY_APPLICATION_PACKAGES) and the types"
                        + " allowClassPrefix names travel by name";
            }
        }
        return otherwise;
    }

    /** The {@link RpcException} a serializer threw, which Fory wrapped as {@code e}'s cause; else null. */
    private static RpcException thrownBySerializer(Throwable e) {
        for (Throwable cause = e.getCause(); cause != null && cause != e; e = cause, cause = cause.getCause()) {
            if (cause instanceof RpcException rpc) {
                return rpc;
            }
        }
        return null;
    }

    private static String firstGroup(Matcher matched) {
        for (int i = 1; i <= matched.groupCount(); i++) {
            if (matched.group(i) != null) {
                return matched.group(i);
            }
        }
        return "a class";
    }

    /**
     * The message of the innermost cause that has one: Fory wraps what a serializer threw in
     * "Deserialize failed, read objects are: ...", which does not say what was wrong.
     */
    private static String innermostMessage(Throwable e) {
        String message = e.getMessage();
        for (Throwable cause = e.getCause(); cause != null && cause != e; e = cause, cause = cause.getCause()) {
            if (cause.getMessage() != null) {
                message = cause.getMessage();
            }
        }
        return message;
    }

    /** The value being encoded, in the caller's terms: a call is its function, not Ferry's carrier. */
    private static String whatIsEncoded(Object value) {
        return value instanceof CallRequest call ? "the call to " + call.function().displayName()
                + " (its function and arguments)" : "a value of type " + typeName(value);
    }

    private static String typeName(Object value) {
        return value == null ? "null" : value.getClass().getName();
    }

    /** Collects registrations, then applies them to every Fory instance of the pool. */
    private static final class Registry implements TypeRegistry {
        private final List<Consumer<Fory>> actions = new ArrayList<>();
        private boolean userMode;
        private boolean ferryModule;

        @Override
        public void register(Class<?> type, int id) {
            checkId(type, id);
            actions.add(f -> f.register(type, id));
        }

        @Override
        public void register(Class<?> type, int id, Function<TypeResolver, Serializer<?>> serializerFactory) {
            checkId(type, id);
            actions.add(f -> {
                f.register(type, id);
                f.registerSerializer(type, serializerFactory);
            });
        }

        private void checkId(Class<?> type, int id) {
            boolean moduleId = ferryModule && id >= FIRST_MODULE_ID;
            if (userMode && id < FIRST_USER_ID && !moduleId) {
                throw new RpcException(RpcException.Code.INVALID_ARGUMENT, "type id " + id + " of " + type.getName()
                        + " is reserved for Ferry; extensions use ids from " + FIRST_USER_ID);
            }
        }

        Consumer<Fory> apply() {
            List<Consumer<Fory>> snapshot = List.copyOf(actions);
            return f -> snapshot.forEach(action -> action.accept(f));
        }
    }

    /**
     * Fory's buffer callback for one encode: buffers of at least the threshold go out of band; and
     * whether any buffer was met at all, since only then does the stream depend on the callback
     * (Fory's array serializers write another layout when one is set).
     */
    private static final class BufferSorter implements BufferCallback {
        private final int threshold;
        private List<BufferObject> outOfBand = List.of();
        private boolean met;

        BufferSorter(int threshold) {
            this.threshold = threshold;
        }

        @Override
        public boolean apply(BufferObject buffer) {
            met = true;
            if (buffer.totalBytes() < threshold) {
                return true;
            }
            if (outOfBand.isEmpty()) {
                outOfBand = new ArrayList<>(2);
            }
            outOfBand.add(buffer);
            return false;
        }
    }
}
