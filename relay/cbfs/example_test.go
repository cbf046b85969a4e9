package cbfs_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/ethereum/go-ethereum/crypto"
)

// Example shows the calls the CLI makes. It needs running relays listed in
// relays.json, so it is compiled but not run.
func Example() {
	ctx := context.Background()
	owner, _ := crypto.GenerateKey()
	c, err := cbfs.New(cbfs.Config{
		Key:       owner,
		Directory: cbfs.StaticDirectory{Path: "relays.json"},
		Anchor:    &cbfs.FileAnchor{Path: "anchors.json"},
	})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	vol, _ := c.CreateVolume(ctx, cbfs.VolumeOptions{K: 4, M: 2})  // cowboy volume create
	vol.Put(ctx, "/data/in.csv", bytes.NewReader([]byte("a,b\n"))) // cowboy cp local volume:/data/in.csv
	vol.Get(ctx, "/data/in.csv", os.Stdout)                        // cowboy cp volume:/data/in.csv -
	files, _ := vol.List(ctx, "/data")                             // cowboy ls
	vol.Remove(ctx, "/data/in.csv")                                // cowboy rm
	info, _ := vol.Info(ctx)                                       // cowboy volume info
	fmt.Println(len(files), info.Version, info.Root)

	// cowboy grant: a runner gets read access to /data for one hour.
	runner, _ := crypto.GenerateKey()
	tok, _ := vol.Grant(ctx, cbfs.GrantOptions{Grantee: &runner.PublicKey,
		Perms: captoken.PermRead | captoken.PermList, Prefix: "/data", TTL: time.Hour})
	fmt.Println(tok.Hex()) // hand this string to the runner

	// The runner side.
	rc, _ := cbfs.New(cbfs.Config{Key: runner, Directory: cbfs.StaticDirectory{Path: "relays.json"},
		Anchor: &cbfs.FileAnchor{Path: "anchors.json"}})
	parsed, _ := captoken.ParseHex(tok.Hex())
	shared, _ := rc.OpenShared(ctx, parsed)
	shared.Get(ctx, "/data/in.csv", os.Stdout)

	// Owner on another machine: only the key and the volume id are needed.
	again, _ := c.OpenVolume(ctx, vol.ID())
	_ = again
}
