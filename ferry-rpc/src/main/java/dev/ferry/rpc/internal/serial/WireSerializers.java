package dev.ferry.rpc.internal.serial;

import dev.ferry.rpc.WorkerInfo;
import org.apache.fory.config.Config;
import org.apache.fory.context.ReadContext;
import org.apache.fory.context.WriteContext;
import org.apache.fory.memory.MemoryBuffer;
import org.apache.fory.serializer.Serializer;

import java.util.ArrayList;
import java.util.List;

/**
 * Hand-written Fory serializers for the wire types every call carries ({@link FunctionRef},
 * {@link CallRequest}), the one every failed call answers ({@link RemoteErrorInfo}) and the ones
 * rendezvous sends ({@link WorkerInfo}).
 *
 * <h2>Why not Fory's generated ones</h2>
 * Fory generates a serializer class for each record on first use, compiling Java source with
 * Janino inside the worker: some 100 ms of CPU per process during {@code init}, and a queue of
 * just-in-time compilations (Janino itself, method-handle plumbing) that the JVM then works through
 * after {@code init} has returned, while the worker should be idle (and, for a remote error, the
 * first failed call waited for it). A generated serializer is also a class of no module, which
 * cannot reach Ferry's internal packages when Ferry runs on the module path. These types are fixed
 * and small, so a few lines each do the same job from the first call on. Their values are immutable
 * and never shared within a message, so they are written without reference tracking.
 */
final class WireSerializers {

    private WireSerializers() {
    }

    /**
     * {@code | identity length | identity (FunctionRef's encoding of class, method, descriptor and
     * kind, written once per method and recognised by FunctionIdentities) | captured count (or -1
     * for null) | captured values |}. A function the callee bound ({@link FunctionHandles}) has
     * {@code | 0 | handle |} in place of the identity (no identity is empty).
     *
     * <pre>
     *   by reference:  varuint32 length (&gt; 0) | length bytes of identity
     *   bound:         varuint32 0            | varuint32 handle
     * </pre>
     */
    static final class FunctionRefSerializer extends Serializer<FunctionRef> {
        FunctionRefSerializer(Config config) {
            super(config, FunctionRef.class, false, true);
        }

        @Override
        public void write(WriteContext write, FunctionRef value) {
            writeIdentity(write, value);
            writeValues(write, value.captured());
        }

        @Override
        public FunctionRef read(ReadContext read) {
            return FunctionRef.of(readIdentity(read), readValues(read));
        }

        static void writeIdentity(WriteContext write, FunctionRef value) {
            if (value.handle() != FunctionRef.NO_HANDLE) {
                write.getBuffer().writeVarUInt32(0);
                write.getBuffer().writeVarUInt32(value.handle());
                return;
            }
            byte[] identity = value.identityBytes();
            write.getBuffer().writeVarUInt32(identity.length);
            write.getBuffer().writeBytes(identity);
        }

        static FunctionRef.Identity readIdentity(ReadContext read) {
            MemoryBuffer buffer = read.getBuffer();
            int length = buffer.readVarUInt32();
            if (length == 0) {
                return ObjectCodec.boundFunction(buffer.readVarUInt32());
            }
            return FunctionIdentities.SHARED.read(buffer, length);
        }
    }

    /** {@code | function (as FunctionRefSerializer writes it) | argument count (or -1 for null) | arguments |}. */
    static final class CallRequestSerializer extends Serializer<CallRequest> {
        CallRequestSerializer(Config config) {
            super(config, CallRequest.class, false, true);
        }

        // The captured values and the arguments go through one loop, so that the JIT inlines
        // Fory's writeRef/readRef (a large tree) once into these methods, not twice.

        @Override
        public void write(WriteContext write, CallRequest value) {
            FunctionRef function = value.function();
            FunctionRefSerializer.writeIdentity(write, function);
            for (int list = 0; list < 2; list++) {
                writeValues(write, list == 0 ? function.captured() : value.args());
            }
        }

        @Override
        public CallRequest read(ReadContext read) {
            FunctionRef.Identity identity = FunctionRefSerializer.readIdentity(read);
            Object[] captured = null;
            Object[] args = null;
            for (int list = 0; list < 2; list++) {
                Object[] values = readValues(read);
                if (list == 0) {
                    captured = values;
                } else {
                    args = values;
                }
            }
            return new CallRequest(FunctionRef.of(identity, captured), args);
        }
    }

    /**
     * {@code | code | class name | message? | frame count | frames | cause? |}, a frame
     * {@code | declaring class | method | file? | line |}, where {@code x?} is a presence flag
     * and, when present, the value; causes at most {@link RemoteErrorInfo#MAX_CAUSES} deep.
     */
    static final class RemoteErrorInfoSerializer extends Serializer<RemoteErrorInfo> {
        /** The fewest bytes a frame takes: two empty strings, a flag and a line. */
        private static final int MIN_FRAME_BYTES = 4;

        RemoteErrorInfoSerializer(Config config) {
            super(config, RemoteErrorInfo.class, false, true);
        }

        @Override
        public void write(WriteContext write, RemoteErrorInfo value) {
            for (RemoteErrorInfo error = value; error != null; error = error.cause()) {
                writeNullable(write, error.code());
                writeNullable(write, error.className());
                writeNullable(write, error.message());
                write.writeVarUInt32(error.frames().size());
                for (RemoteErrorInfo.Frame frame : error.frames()) {
                    write.writeString(frame.declaringClass());
                    write.writeString(frame.methodName());
                    writeNullable(write, frame.fileName());
                    write.writeVarInt32(frame.lineNumber());
                }
                write.writeBoolean(error.cause() != null);
            }
        }

        @Override
        public RemoteErrorInfo read(ReadContext read) {
            List<RemoteErrorInfo> chain = new ArrayList<>();
            boolean more = true;
            while (more) {
                if (chain.size() > RemoteErrorInfo.MAX_CAUSES) {
                    throw new IllegalArgumentException("a remote error with more than " + RemoteErrorInfo.MAX_CAUSES
                            + " causes");
                }
                String code = readNullable(read);
                String className = readNullable(read);
                String message = readNullable(read);
                int count = read.readVarUInt32();
                if (count < 0 || (long) count * MIN_FRAME_BYTES > read.getBuffer().remaining()) {
                    throw new IllegalArgumentException("frame count " + count + " exceeds the "
                            + read.getBuffer().remaining() + " bytes left in the message");
                }
                List<RemoteErrorInfo.Frame> frames = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    String declaringClass = read.readString();
                    String methodName = read.readString();
                    frames.add(new RemoteErrorInfo.Frame(declaringClass, methodName, readNullable(read),
                            read.readVarInt32()));
                }
                chain.add(new RemoteErrorInfo(code, className, message, frames, null));
                more = read.readBoolean();
            }
            RemoteErrorInfo error = null;
            for (int i = chain.size() - 1; i >= 0; i--) {
                RemoteErrorInfo link = chain.get(i);
                error = new RemoteErrorInfo(link.code(), link.className(), link.message(), link.frames(), error);
            }
            return error;
        }

        private static void writeNullable(WriteContext write, String value) {
            write.writeBoolean(value != null);
            if (value != null) {
                write.writeString(value);
            }
        }

        private static String readNullable(ReadContext read) {
            return read.readBoolean() ? read.readString() : null;
        }
    }

    /** {@code | name | id |}. */
    static final class WorkerInfoSerializer extends Serializer<WorkerInfo> {
        WorkerInfoSerializer(Config config) {
            super(config, WorkerInfo.class, false, true);
        }

        @Override
        public void write(WriteContext write, WorkerInfo value) {
            write.writeString(value.name());
            write.writeVarInt32(value.id());
        }

        @Override
        public WorkerInfo read(ReadContext read) {
            String name = read.readString();
            return new WorkerInfo(name, read.readVarInt32());
        }
    }

    /**
     * Values of any type (arguments, captured values), each with Fory's reference tracking, so
     * that one object passed twice arrives as one object, as with Fory's own array serializer.
     */
    private static void writeValues(WriteContext write, Object[] values) {
        if (values == null) {
            write.writeVarInt32(-1);
            return;
        }
        write.writeVarInt32(values.length);
        for (Object value : values) {
            write.writeRef(value);
        }
    }

    private static Object[] readValues(ReadContext read) {
        int count = read.readVarInt32();
        if (count < 0) {
            return null;
        }
        // A corrupt count must not allocate a huge array before the stream runs out: each value
        // takes at least one byte.
        if (count > read.getBuffer().remaining()) {
            throw new IllegalArgumentException("value count " + count + " exceeds the " + read.getBuffer().remaining()
                    + " bytes left in the message");
        }
        Object[] values = new Object[count];
        for (int i = 0; i < count; i++) {
            values[i] = read.readRef();
        }
        return values;
    }
}
