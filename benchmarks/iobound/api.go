package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The world the tools read and write: a product catalog served by an HTTP
// API, and carts, order histories, a popularity ranking and rate counters
// in Redis. The catalog is a pure function of the product ID, so that the
// load generator can check every answer without asking anyone.

const (
	catalogSize = 20000
	seedUsers   = 1000 // users with a cart and a history: user-00000 to user-00999
	historySeed = 6    // orders in each seeded history (the cart tool reads five)
	rankedSeed  = 10000
)

var categories = []string{"Electronics", "Books", "Clothing", "Sports", "Home", "Garden", "Toys", "Food", "Beauty", "Office"}

// product is one catalog entry, as the API answers it.
type product struct {
	ID       int     `json:"id"`
	SKU      string  `json:"sku"`
	Name     string  `json:"name"`
	Category string  `json:"category"`
	Price    float64 `json:"price"`
	Rating   float64 `json:"rating"`
	Stock    int     `json:"stock"`
}

// productByID returns the catalog's product id (1 to catalogSize).
func productByID(id int) product {
	i := id - 1
	cat := categories[i%len(categories)]
	return product{
		ID:       id,
		SKU:      fmt.Sprintf("SKU-%06d", id),
		Name:     fmt.Sprintf("%s item %d", cat, id),
		Category: cat,
		Price:    1 + float64(i*37%99900)/100,
		Rating:   1 + float64(i%41)/10,
		Stock:    i % 500,
	}
}

// catalog indexes the products by category, sorted by price (then ID), so
// that a search is a binary search and a slice.
type catalog struct {
	byCategory map[string][]product
}

func newCatalog() *catalog {
	c := &catalog{byCategory: map[string][]product{}}
	for id := 1; id <= catalogSize; id++ {
		p := productByID(id)
		c.byCategory[p.Category] = append(c.byCategory[p.Category], p)
	}
	for _, ps := range c.byCategory {
		slices.SortFunc(ps, func(a, b product) int {
			if a.Price != b.Price {
				if a.Price < b.Price {
					return -1
				}
				return 1
			}
			return a.ID - b.ID
		})
	}
	return c
}

// search returns how many products of category cost between min and max,
// and the first limit of them, cheapest first.
func (c *catalog) search(category string, minPrice, maxPrice float64, limit int) (int, []product) {
	ps := c.byCategory[category]
	lo, _ := slices.BinarySearchFunc(ps, minPrice, func(p product, v float64) int { return cmpFloat(p.Price, v) })
	hi, found := slices.BinarySearchFunc(ps, maxPrice, func(p product, v float64) int { return cmpFloat(p.Price, v) })
	for found && hi < len(ps) && ps[hi].Price <= maxPrice {
		hi++
	}
	if hi < lo {
		hi = lo
	}
	page := ps[lo:hi]
	return len(page), page[:min(limit, len(page))]
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// lineItem is one product and quantity of a cart or an order.
type lineItem struct {
	ProductID int `json:"product_id"`
	Quantity  int `json:"quantity"`
}

// quote is the API's answer to POST /cart/calculate.
type quote struct {
	OrderID  string  `json:"order_id"`
	Subtotal float64 `json:"subtotal"`
	Tax      float64 `json:"tax"`
	Shipping float64 `json:"shipping"`
	Total    float64 `json:"total"`
}

func cents(f float64) float64 { return math.Round(f*100) / 100 }

// quoteFor prices items for user.
func quoteFor(user string, items []lineItem) quote {
	var sub float64
	for _, it := range items {
		if it.ProductID >= 1 && it.ProductID <= catalogSize {
			sub += productByID(it.ProductID).Price * float64(it.Quantity)
		}
	}
	q := quote{OrderID: fmt.Sprintf("ORD-%s-%d", user, len(items)), Subtotal: cents(sub), Tax: cents(sub * 0.08), Shipping: 4.99}
	if sub >= 100 {
		q.Shipping = 0
	}
	q.Total = cents(q.Subtotal + q.Tax + q.Shipping)
	return q
}

// apiHandler returns the HTTP API the tools call: GET /products/search,
// GET /products/{id} and POST /cart/calculate. Each answer waits delay
// first, standing for a remote service's latency.
func apiHandler(delay time.Duration) http.Handler {
	c := newCatalog()
	wait := func(r *http.Request) bool {
		if delay <= 0 {
			return true
		}
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-r.Context().Done():
			return false
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /products/search", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		minPrice, err1 := strconv.ParseFloat(q.Get("min_price"), 64)
		maxPrice, err2 := strconv.ParseFloat(q.Get("max_price"), 64)
		limit, err3 := strconv.Atoi(q.Get("limit"))
		if err1 != nil || err2 != nil || err3 != nil || limit < 1 || limit > 100 {
			http.Error(w, "bad search", http.StatusBadRequest)
			return
		}
		if !wait(r) {
			return
		}
		total, page := c.search(q.Get("category"), minPrice, maxPrice, limit)
		writeJSON(w, searchAnswer{TotalFound: total, Products: page})
	})
	mux.HandleFunc("GET /products/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.Atoi(r.PathValue("id"))
		if err != nil || id < 1 || id > catalogSize {
			http.NotFound(w, r)
			return
		}
		if !wait(r) {
			return
		}
		writeJSON(w, productByID(id))
	})
	mux.HandleFunc("POST /cart/calculate", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			UserID string     `json:"user_id"`
			Items  []lineItem `json:"items"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&in); err != nil {
			http.Error(w, "bad cart", http.StatusBadRequest)
			return
		}
		if !wait(r) {
			return
		}
		writeJSON(w, quoteFor(in.UserID, in.Items))
	})
	return mux
}

// searchAnswer is the API's answer to GET /products/search.
type searchAnswer struct {
	TotalFound int       `json:"total_found"`
	Products   []product `json:"products"`
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// userID returns the name of seeded user n.
func userID(n int) string { return fmt.Sprintf("user-%05d", n%seedUsers) }

// Redis keys.
func cartKey(user string) string    { return "bench:cart:" + user }
func historyKey(user string) string { return "bench:history:" + user }
func rateKey(user string) string    { return "bench:rate:" + user }

const popularKey = "bench:popular"

// seedCart returns the cart seeded for user n: one to three products.
func seedCart(n int) []lineItem {
	items := make([]lineItem, 1+n%3)
	for i := range items {
		items[i] = lineItem{ProductID: 1 + (n*7+i*131)%catalogSize, Quantity: 1 + i}
	}
	return items
}

// seed empties the Redis database and fills it: a cart and a history for
// every seeded user, and the popularity ranking.
func seed(ctx context.Context, rdb *redis.Client) error {
	if err := rdb.FlushDB(ctx).Err(); err != nil {
		return err
	}
	pipe := rdb.Pipeline()
	for n := range seedUsers {
		user := userID(n)
		items := seedCart(n)
		raw, err := json.Marshal(items)
		if err != nil {
			return err
		}
		pipe.HSet(ctx, cartKey(user), "items", raw, "total", strconv.FormatFloat(quoteFor(user, items).Total, 'f', 2, 64))
		for k := range historySeed {
			order, err := json.Marshal(order{OrderID: fmt.Sprintf("ORD-SEED-%d-%d", n, k), Items: items, Time: int64(1_700_000_000 + k)})
			if err != nil {
				return err
			}
			pipe.RPush(ctx, historyKey(user), order)
		}
	}
	members := make([]redis.Z, rankedSeed)
	for i := range members {
		members[i] = redis.Z{Score: float64(i % 997), Member: "product:" + strconv.Itoa(1+i)}
	}
	pipe.ZAdd(ctx, popularKey, members...)
	_, err := pipe.Exec(ctx)
	return err
}

// parseRanked returns the product ID of a popularity member
// ("product:42"), or 0.
func parseRanked(member string) int {
	id, err := strconv.Atoi(strings.TrimPrefix(member, "product:"))
	if err != nil {
		return 0
	}
	return id
}
