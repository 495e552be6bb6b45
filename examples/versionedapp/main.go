// Command versionedapp is a small users service whose collection holds
// documents written at versions 0 to 3: it reads them all as today's
// struct through versioned.Collection, writes upgrades back in the
// background, stamps and validates what it inserts, and publishes upgrade
// counts on /debug/vars. docs/lazy-upgrades.md quotes it; its test runs it
// against the embedded sandbox.
//
//	go run ./examples/versionedapp -uri mongodb://localhost:27017 -addr :8080
package main

import (
	"context"
	"errors"
	"expvar"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func main() {
	uri := flag.String("uri", "mongodb://localhost:27017", "MongoDB connection string")
	dbName := flag.String("db", "app", "database name")
	addr := flag.String("addr", "localhost:8080", "HTTP listen address")
	flag.Parse()
	if err := run(*uri, *dbName, *addr); err != nil {
		fmt.Fprintln(os.Stderr, "versionedapp:", err)
		os.Exit(1)
	}
}

func run(uri, dbName, addr string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	reg, err := NewRegistry()
	if err != nil {
		return err // an invalid file or an unregistered func: do not start
	}
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return err
	}
	metrics := NewMetrics()
	expvar.Publish("users", metrics.Var())
	app := NewApp(client.Database(dbName), reg, metrics)

	mux := http.NewServeMux()
	mux.Handle("/", app.Handler())
	mux.Handle("GET /debug/vars", expvar.Handler())
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.Background())
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return shutdown(app, client)
}

// shutdown sends the write-backs still queued, then disconnects.
func shutdown(app *App, client *mongo.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := app.Users().Close(ctx); err != nil {
		return err
	}
	return client.Disconnect(ctx)
}
