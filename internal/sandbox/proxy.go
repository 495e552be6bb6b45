package sandbox

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/testhook"
)

// The proxy sits between clients and FerretDB. It copies the MongoDB wire
// protocol both ways, message by message, and looks at the first key of
// each command for two reasons only:
//
//   - dropDatabase: FerretDB removes the database's file. The tuner's own
//     SQLite connection to that file must be closed first and must stay
//     closed until the drop has been answered, or SQLite would keep the old
//     WAL and shared-memory files alive for the file created next under the
//     same name (see docs/sandbox.md).
//   - find and aggregate: a cursor that may stay open for long; the tuner
//     first makes sure the WAL holds an un-checkpointed commit.
//
// Nothing else is parsed or changed. In tests, a hook set for the Server
// (internal/testhook) is called with "sandbox.<command name>" before each
// command is forwarded: a hook that blocks pauses the server for that
// command, which it does not see until the hook returns (a server that
// does not answer in time, for the client's timeouts).

const (
	opMsg          = 2013
	msgHeaderLen   = 16
	maxMessageSize = 64 << 20 // FerretDB's and MongoDB's limit is 48 MB
	flagChecksum   = 1 << 0
	flagMoreToCome = 1 << 1
)

type proxy struct {
	ln      net.Listener
	backend string
	tuner   *tuner
	key     any // the Server, for its test hook

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func newProxy(ln net.Listener, backend string, t *tuner, key any) *proxy {
	p := &proxy{ln: ln, backend: backend, tuner: t, key: key, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p
}

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // listener closed by close
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serve(c)
		}()
	}
}

// track registers c; it reports false once the proxy is closing.
func (p *proxy) track(c net.Conn, add bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		return false
	}
	if add {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
	return true
}

func (p *proxy) serve(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.backend)
	if err != nil {
		return // the client sees its connection closed
	}
	defer server.Close()
	if !p.track(client, true) {
		return
	}
	defer p.track(client, false)
	p.track(server, true)
	defer p.track(server, false)

	var (
		mu      sync.Mutex
		pending = map[int32]func(){} // requestID of a dropDatabase -> release
	)
	releaseAll := func() {
		mu.Lock()
		defer mu.Unlock()
		for id, release := range pending {
			release()
			delete(pending, id)
		}
	}
	defer releaseAll()

	done := make(chan struct{})
	go func() {
		defer close(done)
		// Server to client: release a drop's barrier once it is answered.
		_ = pump(server, client, func(h header, _ []byte) func() {
			mu.Lock()
			release := pending[h.responseTo]
			delete(pending, h.responseTo)
			mu.Unlock()
			return release // after the reply is forwarded
		})
		_ = client.Close()
	}()
	var unacked func() // the barrier of a dropDatabase sent without reply
	_ = pump(client, server, func(h header, body []byte) func() {
		if unacked != nil {
			// FerretDB handles the messages of one connection in order: the
			// one before this has been handled once this one is answered.
			release := unacked
			unacked = nil
			mu.Lock()
			pending[h.requestID] = release
			mu.Unlock()
		}
		name, db := command(h, body)
		if hook := testhook.Get(p.key); hook != nil && name != "" {
			hook("sandbox."+name, 0, 0)
		}
		switch name {
		case "dropDatabase":
			release := p.tuner.barrier(db)
			if h.flags&flagMoreToCome != 0 {
				unacked = release
				return nil
			}
			mu.Lock()
			pending[h.requestID] = release
			mu.Unlock()
		case "find", "aggregate":
			p.tuner.beforeCursor(db)
		}
		return nil
	})
	if unacked != nil {
		unacked()
	}
	_ = server.Close()
	<-done
}

func (p *proxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}

type header struct {
	length, requestID, responseTo, opCode int32
	flags                                 uint32
}

// pump copies whole messages from src to dst, calling inspect on each
// before it is forwarded and the function inspect returns, if any, after.
func pump(src io.Reader, dst io.Writer, inspect func(h header, body []byte) func()) error {
	r := bufio.NewReaderSize(src, 64<<10)
	buf := make([]byte, 0, 64<<10)
	for {
		buf = buf[:msgHeaderLen]
		if _, err := io.ReadFull(r, buf); err != nil {
			return err
		}
		h := header{
			length:     int32(binary.LittleEndian.Uint32(buf[0:])),
			requestID:  int32(binary.LittleEndian.Uint32(buf[4:])),
			responseTo: int32(binary.LittleEndian.Uint32(buf[8:])),
			opCode:     int32(binary.LittleEndian.Uint32(buf[12:])),
		}
		if h.length < msgHeaderLen || h.length > maxMessageSize {
			return fmt.Errorf("wire message of %d bytes", h.length)
		}
		if cap(buf) < int(h.length) {
			nb := make([]byte, h.length)
			copy(nb, buf)
			buf = nb
		}
		buf = buf[:h.length]
		if _, err := io.ReadFull(r, buf[msgHeaderLen:]); err != nil {
			return err
		}
		if h.opCode == opMsg && h.length >= msgHeaderLen+4 {
			h.flags = binary.LittleEndian.Uint32(buf[msgHeaderLen:])
		}
		after := inspect(h, buf[msgHeaderLen:])
		_, err := dst.Write(buf)
		if after != nil {
			after()
		}
		if err != nil {
			return err
		}
	}
}

// command returns the command name and the $db of an OP_MSG, or "" for
// anything else.
func command(h header, body []byte) (name, db string) {
	if h.opCode != opMsg || len(body) < 5 {
		return "", ""
	}
	end := len(body)
	if h.flags&flagChecksum != 0 {
		end -= 4
	}
	for i := 4; i < end; {
		kind := body[i]
		i++
		if i+4 > end {
			return "", ""
		}
		size := int(int32(binary.LittleEndian.Uint32(body[i:])))
		if size < 5 || i+size > end {
			return "", ""
		}
		if kind != 0 {
			i += size // a document sequence: not the command
			continue
		}
		doc := bson.Raw(body[i : i+size])
		first, err := doc.IndexErr(0)
		if err != nil {
			return "", ""
		}
		if v, err := doc.LookupErr("$db"); err == nil {
			db, _ = v.StringValueOK()
		}
		return first.Key(), db
	}
	return "", ""
}
