-- mfm_state: appends one JSON line per 0.1 s to <world>/mfm_state.jsonl
-- with the player's pose, vitals, inventory, controls, game time, what the
-- crosshair points at, the nearest standing tree (base and height), dropped
-- items, and the events since the last line.
-- Written for the MFM Luanti harness (package luanti).
local path = minetest.get_worldpath() .. "/mfm_state.jsonl"
local out = assert(io.open(path, "a"))
local events = {}
local seq = 0
local tree_cache = nil
local acc = 0
local period = tonumber(minetest.settings:get("mfm_state_period")) or 0.1

local function ev(e) events[#events + 1] = e end

-- Minecraft-like drops (setting mfm_item_drops, default true): a dug
-- node's drops fall to the ground as items instead of going straight into
-- the inventory, and a player picks up items by walking over them (within
-- 1.2 blocks, once they are 0.6 s old), so gathering means collecting.
local item_drops = minetest.settings:get_bool("mfm_item_drops", true)
if item_drops then
	function minetest.handle_node_drops(pos, drops, digger)
		for _, item in ipairs(drops) do
			minetest.add_item({x = pos.x + math.random() * 0.4 - 0.2, y = pos.y,
				z = pos.z + math.random() * 0.4 - 0.2}, item)
		end
	end
end

local function pick_up(player)
	local inv = player:get_inventory()
	local center = vector.add(player:get_pos(), {x = 0, y = 0.5, z = 0})
	for _, obj in ipairs(minetest.get_objects_inside_radius(center, 1.2)) do
		local le = obj:get_luaentity()
		if le and le.name == "__builtin:item" and le.itemstring ~= "" and (le.age or 1) > 0.6 then
			local stack = ItemStack(le.itemstring)
			local left = inv:add_item("main", stack)
			local got = stack:get_count() - left:get_count()
			if got > 0 then
				ev({type = "pickup", item = stack:get_name(), count = got})
			end
			if left:is_empty() then
				obj:remove()
			else
				le:set_item(left)
			end
		end
	end
end
local function p3(p) return {x = p.x, y = p.y, z = p.z} end

-- The start kit (setting mfm_start_kit: item strings separated by commas;
-- empty: nothing) is given to a new player, and nothing else. A count over
-- the item's stack size fills several slots; an unknown item is left out
-- and logged (the harness checks the logged inventory against the kit).
local default_kit = "default:pick_stone,default:shovel_stone,default:axe_stone," ..
	"default:dirt 99,default:dirt 99,default:apple 40,default:torch 10"
minetest.register_on_newplayer(function(player)
	local inv = player:get_inventory()
	local kit = minetest.settings:get("mfm_start_kit") or default_kit
	for s in string.gmatch(kit, "[^,]+") do
		s = s:match("^%s*(.-)%s*$")
		local stack = ItemStack(s)
		local name = stack:get_name()
		if s ~= "" and minetest.registered_items[name] and name ~= "" then
			local n, max = stack:get_count(), math.max(1, stack:get_stack_max())
			if n <= max then
				inv:add_item("main", stack) -- as given, with a tool's wear
				n = 0
			end
			while n > 0 do
				local k = math.min(n, max)
				inv:add_item("main", name .. " " .. k)
				n = n - k
			end
		elseif s ~= "" then
			minetest.log("warning", "mfm_state: start kit: no item " .. s)
		end
	end
end)

-- No chat lines at all: the server status, join and leave messages would
-- be drawn over the frames (and hiding the chat with F2 draws "Chat
-- hidden" instead).
function minetest.send_join_message() end
function minetest.send_leave_message() end
local server_status = minetest.get_server_status
function minetest.get_server_status(name, joined)
	if joined then return "" end
	return server_status(name, joined)
end

-- A sane spawn: on walkable ground (not leaves, trunk or liquid) under open
-- sky, the nearest such column to where the engine put the player. The
-- area is emerged first; until the player stands there the state lines
-- say ready = false, and the harness waits for ready.
local ready = false
local spawn_note = ""

local function is_plant(def)
	return def and not def.walkable and def.buildable_to and def.liquidtype == "none"
end

-- ground_at is the y of the ground in column (x, z) seen from ytop down,
-- if that ground is under open sky and is firm.
local function ground_at(x, z, ytop, ybot)
	for y = ytop, ybot, -1 do
		local n = minetest.get_node({x = x, y = y, z = z}).name
		if n == "ignore" then return nil end
		if n ~= "air" then
			local def = minetest.registered_nodes[n]
			if not is_plant(def) then
				if not def or not def.walkable or minetest.get_item_group(n, "leaves") > 0 or
						minetest.get_item_group(n, "tree") > 0 then
					return nil
				end
				return y, n
			end
		end
	end
	return nil
end

local function find_spawn(c)
	c = vector.round(c)
	for r = 0, 30 do
		for dx = -r, r do
			for dz = -r, r do
				if math.max(math.abs(dx), math.abs(dz)) == r then
					local y, n = ground_at(c.x + dx, c.z + dz, c.y + 24, c.y - 20)
					if y then return {x = c.x + dx, y = y + 0.5, z = c.z + dz}, n end
				end
			end
		end
	end
	return nil
end

local function settle_spawn(player)
	ready = false
	local name = player:get_player_name()
	local c = vector.round(player:get_pos())
	local started = minetest.get_us_time()
	minetest.emerge_area(vector.add(c, {x = -32, y = -24, z = -32}), vector.add(c, {x = 32, y = 32, z = 32}),
		function(_, _, remaining)
			if remaining > 0 then return end
			local p = minetest.get_player_by_name(name)
			if not p then return end
			local pos, node = find_spawn(c)
			if pos then
				p:set_pos(pos)
				spawn_note = string.format("spawned on %s at %d,%d,%d under open sky", node, pos.x, pos.y, pos.z)
			else
				spawn_note = "no ground under open sky within 30 blocks: left where the engine put the player"
			end
			minetest.log("action", "[mfm_state] " .. spawn_note .. string.format(" (%.1f s)", (minetest.get_us_time() - started) / 1e6))
			ready = true
		end)
end
minetest.register_on_joinplayer(function(player) settle_spawn(player) end)
minetest.register_on_respawnplayer(function(player)
	minetest.after(0, function() settle_spawn(player) end)
end)
minetest.register_on_dignode(function(pos, oldnode, digger)
	if digger and digger:is_player() then ev({type = "dig", node = oldnode.name, pos = p3(pos)}) end
	tree_cache = nil
end)
minetest.register_on_placenode(function(pos, newnode, placer)
	if placer and placer:is_player() then ev({type = "place", node = newnode.name, pos = p3(pos)}) end
end)
minetest.register_on_player_hpchange(function(player, hp_change, reason)
	ev({type = "hp", change = hp_change, reason = reason and reason.type or "unknown",
		node = reason and reason.node or nil})
end, false)
minetest.register_on_dieplayer(function(player, reason)
	ev({type = "die", reason = reason and reason.type or "unknown"})
end)
minetest.register_on_respawnplayer(function(player)
	ev({type = "respawn"})
end)
minetest.register_on_item_eat(function(hp_change, replace_with_item, itemstack, user, pointed_thing)
	ev({type = "eat", item = itemstack:get_name(), hp = hp_change})
end)

-- reach is how far the wielded item digs and places: its range, else
-- the hand's, else the engine's default of 4 blocks (from the eye).
local function reach(name)
	local def = minetest.registered_items[name]
	if def and def.range then return def.range end
	local hand = minetest.registered_items[""]
	return hand and hand.range or 4
end

local function wielded_use(name)
	local def = minetest.registered_items[name]
	if def and def.on_use then return "use" end
	return "place"
end

-- pointed_object is the entity in the crosshair within 4 blocks (the
-- reach of a punch), if it comes before any node.
local function pointed_object(player)
	local eye = vector.add(player:get_pos(), {x = 0, y = player:get_properties().eye_height or 1.47, z = 0})
	local to = vector.add(eye, vector.multiply(player:get_look_dir(), 4))
	for pt in minetest.raycast(eye, to, true, false) do
		if pt.type == "object" and pt.ref ~= player then
			local le = pt.ref:get_luaentity()
			return {name = le and le.name or "player", hp = pt.ref:get_hp(),
				dist = vector.distance(eye, pt.intersection_point)}
		elseif pt.type == "node" then
			local def = minetest.registered_nodes[minetest.get_node(pt.under).name]
			if def and def.walkable then return false end
		end
	end
	return false
end

local function pointed(player)
	local eye = vector.add(player:get_pos(), {x = 0, y = player:get_properties().eye_height or 1.47, z = 0})
	local to = vector.add(eye, vector.multiply(player:get_look_dir(), 5))
	for pt in minetest.raycast(eye, to, false, false) do
		if pt.type == "node" then
			local n = minetest.get_node(pt.under)
			local def = minetest.registered_nodes[n.name]
			if def and def.pointable ~= false and n.name ~= "air" then
				return {node = n.name, under = p3(pt.under), above = p3(pt.above),
					above_node = minetest.get_node(pt.above).name,
					dist = vector.distance(eye, pt.intersection_point),
					-- soft: leaves and plants, cut in a moment, in the way of the block behind
					soft = def.buildable_to or minetest.get_item_group(n.name, "leaves") > 0}
			end
		end
	end
	return nil
end

local function nodename(p) return minetest.get_node(p).name end

-- What a walk runs into: the blocks one step ahead (the facing direction
-- rounded to an axis or a diagonal) at the feet and at the head, with
-- whether each is solid (walkable).
local function ahead_of(feet, yaw)
	local dx = math.floor(-math.sin(yaw) + 0.5)
	local dz = math.floor(math.cos(yaw) + 0.5)
	local p = {x = feet.x + dx, y = feet.y, z = feet.z + dz}
	local h = {x = p.x, y = p.y + 1, z = p.z}
	local function solid(q)
		local def = minetest.registered_nodes[nodename(q)]
		return def ~= nil and def.walkable == true
	end
	return {pos = p, feet = nodename(p), head = nodename(h), feet_solid = solid(p), head_solid = solid(h)}
end

-- Water or lava near the player: the nearest liquid block within 3 of the
-- feet, and under the floor (within 8 blocks below the block stood on)
-- the first block that is a liquid or open air (a cave), which is what
-- digging down would fall into.
local function liquid_near(feet)
	local p = minetest.find_node_near(feet, 3, {"group:liquid"}, true)
	if not p then return false end
	return {node = nodename(p), pos = p3(p)}
end
local function under_floor(feet)
	local floor = minetest.registered_nodes[nodename({x = feet.x, y = feet.y - 1, z = feet.z})]
	if not (floor and floor.walkable) then return false end
	for d = 2, 8 do
		local q = {x = feet.x, y = feet.y - d, z = feet.z}
		local name = nodename(q)
		local def = minetest.registered_nodes[name]
		if name == "air" or (def and def.liquidtype and def.liquidtype ~= "none") then
			return {node = name, depth = d, pos = p3(q)}
		end
	end
	return false
end

-- The nearest standing tree: the lowest trunk node of a column that rests
-- on walkable ground (not on trunk or leaves, so felled and floating
-- trunks are skipped), with the column's height.
local function find_tree(feet)
	local nodes = minetest.find_nodes_in_area(vector.add(feet, {x = -20, y = -6, z = -20}),
		vector.add(feet, {x = 20, y = 8, z = 20}), {"group:tree"})
	local best, bestd
	for _, p in ipairs(nodes) do
		local below = nodename({x = p.x, y = p.y - 1, z = p.z})
		local def = minetest.registered_nodes[below]
		if def and def.walkable and minetest.get_item_group(below, "tree") == 0 and
				minetest.get_item_group(below, "leaves") == 0 then
			local h = 0
			while h < 12 and minetest.get_item_group(nodename({x = p.x, y = p.y + h, z = p.z}), "tree") > 0 do
				h = h + 1
			end
			-- A stump (one block, often sunk in the ground) is not a tree.
			local d = (p.x - feet.x) ^ 2 + (p.z - feet.z) ^ 2 + 4 * (p.y - feet.y) ^ 2
			if h >= 2 and (not bestd or d < bestd) then
				best, bestd = {x = p.x, y = p.y, z = p.z, height = h, node = nodename(p)}, d
			end
		end
	end
	if not best then return false end
	return best
end

local solid_drawtypes = {normal = true, allfaces = true, allfaces_optional = true, glasslike = true,
	glasslike_framed = true, glasslike_framed_optional = true}

-- Commands from the harness: JSON lines appended to <world>/mfm_cmd.jsonl
-- ({"id": N, "cmd": "...", ...}), read every server step from where the
-- last read ended (only whole lines); each command's result is an event
-- {type = "cmd", id = N, cmd = ..., ok = bool, note = "..."} in the next
-- state line. Handlers are in the table `commands`.
local cmd_path = minetest.get_worldpath() .. "/mfm_cmd.jsonl"
local cmd_off = 0
local commands = {}

local function run_command(player, line)
	local c = minetest.parse_json(line)
	if type(c) ~= "table" or type(c.cmd) ~= "string" then
		ev({type = "cmd", id = -1, ok = false, note = "not a command object: " .. line:sub(1, 80)})
		return
	end
	local h = commands[c.cmd]
	local ok, note, extra
	if not h then
		ok, note = false, "unknown command " .. c.cmd
	else
		local pok, a, b, x = pcall(h, player, c)
		if pok then ok, note, extra = a, b, x else ok, note = false, "error: " .. tostring(a) end
	end
	local e = {type = "cmd", id = c.id or -1, cmd = c.cmd, ok = ok and true or false, note = note or ""}
	if extra then e.data = extra end
	ev(e)
end

local function poll_commands(player)
	local f = io.open(cmd_path, "r")
	if not f then return end
	f:seek("set", cmd_off)
	local data = f:read("*a") or ""
	f:close()
	local start = 1
	while true do
		local nl = data:find("\n", start, true)
		if not nl then break end
		local line = data:sub(start, nl - 1)
		start = nl + 1
		if line:match("%S") then run_command(player, line) end
	end
	cmd_off = cmd_off + start - 1
end

local function parse_pos(p)
	if type(p) ~= "table" or type(p.x) ~= "number" or type(p.y) ~= "number" or type(p.z) ~= "number" then
		return nil
	end
	return vector.round({x = p.x, y = p.y, z = p.z})
end

-- setnode: set a node (for tests: e.g. entomb the player's head).
commands.setnode = function(player, c)
	local pos = parse_pos(c.pos)
	if not pos or type(c.node) ~= "string" or not minetest.registered_nodes[c.node] then
		return false, "setnode needs pos {x,y,z} and a registered node"
	end
	minetest.set_node(pos, {name = c.node})
	return true, "set " .. c.node
end

-- craft: crafts item until at least n of it were made (n counts items,
-- not recipe runs: whole runs), through the game's own recipe engine
-- (minetest.get_craft_result) on a grid filled from the player's
-- inventory: the inputs are taken, the output and any replacements
-- given. "group:x" inputs take any inventory item of that group. Not the
-- GUI: no mouse input is involved.
local function group_match(name, want)
	if want:sub(1, 6) ~= "group:" then return name == want end
	for g in string.gmatch(want:sub(7), "[^,]+") do
		if minetest.get_item_group(name, g) == 0 then return false end
	end
	return true
end

-- fill_grid picks inventory items for a recipe's slots; nil and what is
-- missing when the inventory cannot fill it.
local function fill_grid(counts, recipe)
	local left, grid, missing = {}, {}, {}
	for k, v in pairs(counts) do left[k] = v end
	for i = 1, 9 do
		local want = recipe.items[i]
		if want and want ~= "" then
			local got
			for name, n in pairs(left) do
				if n > 0 and group_match(name, want) then got = name break end
			end
			if got then
				left[got] = left[got] - 1
				grid[i] = got
			else
				missing[want] = (missing[want] or 0) + 1
				grid[i] = ""
			end
		else
			grid[i] = ""
		end
	end
	if next(missing) then return nil, missing end
	return grid
end

local function inv_counts(inv)
	local counts = {}
	for _, st in ipairs(inv:get_list("main")) do
		if not st:is_empty() then counts[st:get_name()] = (counts[st:get_name()] or 0) + st:get_count() end
	end
	return counts
end

local function describe(t)
	local parts = {}
	for k, v in pairs(t) do parts[#parts + 1] = v .. " " .. k:gsub("^default:", "") end
	table.sort(parts)
	return table.concat(parts, ", ")
end

-- craft_once crafts one run of a recipe of item. It returns how many
-- were made, what was used and the recipe's index, or nil and what is
-- missing: for recipe index want when given (the recipe earlier runs
-- used), else for the recipe that lacks the fewest items.
local function craft_once(player, item, want)
	local inv = player:get_inventory()
	local recipes = minetest.get_all_craft_recipes(item)
	if not recipes then return nil, "no recipe makes " .. item end
	local missing_note, fewest, ties
	for idx, r in ipairs(recipes) do
		if r.method == "normal" then
			local grid, missing = fill_grid(inv_counts(inv), r)
			if grid then
				local width = r.width
				if width == 0 then width = 3 end
				local out, dec = minetest.get_craft_result({method = "normal", width = width, items = grid})
				if out and not out.item:is_empty() and out.item:get_name() == item then
					if not inv:room_for_item("main", out.item) then return nil, "no room in the inventory for " .. out.item:to_string() end
					local used = {}
					for i, name in ipairs(grid) do
						if name ~= "" then
							inv:remove_item("main", ItemStack(name))
							used[name] = (used[name] or 0) + 1
							local d = dec.items[i]
							if d and not d:is_empty() and d:get_name() ~= name then inv:add_item("main", d) end
						end
					end
					for _, rep in ipairs(out.replacements or {}) do inv:add_item("main", rep) end
					inv:add_item("main", out.item)
					return out.item:get_count(), used, idx
				end
			else
				local n = 0
				for _, v in pairs(missing) do n = n + v end
				if idx == want then
					missing_note, fewest, ties = "missing " .. describe(missing), -1, nil
				elseif not fewest or (fewest >= 0 and n < fewest) then
					missing_note, fewest, ties = "missing " .. describe(missing), n, {describe(missing)}
				elseif fewest >= 0 and n == fewest then
					ties[#ties + 1] = describe(missing)
				end
			end
		end
	end
	if ties and #ties > 1 then
		-- several recipes lack as few items: name each (one of them will
		-- do), not whichever the game lists first (wood: tree or bush_stem)
		table.sort(ties)
		local seen, alts = {}, {}
		for _, d in ipairs(ties) do
			if not seen[d] then seen[d] = true; alts[#alts + 1] = d end
		end
		if #alts > 1 then
			missing_note = "missing " .. table.concat(alts, ", or ") .. " (one recipe each)"
		end
	end
	return nil, missing_note or ("no crafting-grid recipe makes " .. item .. " (a furnace recipe?)")
end

commands.craft = function(player, c)
	local item, n = c.item, tonumber(c.n) or 1
	if type(item) ~= "string" or not minetest.registered_items[item] then
		return false, "craft needs item, a registered item name (e.g. default:wood)"
	end
	local short = item:gsub("^default:", "")
	-- n counts the items wanted, not recipe runs: whole runs are crafted
	-- until at least n were made. per is what one run takes and gives.
	local made, used, runs, per, recipe = 0, {}, 0, nil, nil
	local function runs_text()
		return string.format("%d run%s of %s", runs, runs == 1 and "" or "s", per)
	end
	while made < n do
		local got, u, idx = craft_once(player, item, recipe)
		if not got then
			if made == 0 then return false, u end
			return false, string.format("made %d of %d %s (%s), then %s", made, n, short, runs_text(), u), {made = made}
		end
		runs, recipe = runs + 1, recipe or idx
		per = per or (describe(u) .. " → " .. got .. " " .. short)
		made = made + got
		for k, v in pairs(u) do used[k] = (used[k] or 0) + v end
	end
	ev({type = "craft", item = item, count = made})
	return true, string.format("crafted %d %s from %s (%s)", made, short, describe(used), runs_text()), {made = made}
end

-- hotbar: moves item into the hotbar (first empty hotbar slot, else the
-- last one, whose stack goes where the item was), so a number key can
-- select it. An inventory move by the mod, not the GUI.
commands.hotbar = function(player, c)
	local inv = player:get_inventory()
	local list = inv:get_list("main")
	local from
	for i, st in ipairs(list) do
		if st:get_name() == c.item then
			if i <= 8 then return true, "already in hotbar slot " .. i, {slot = i} end
			from = from or i
		end
	end
	if not from then return false, "no " .. tostring(c.item) .. " in the inventory" end
	local to = 8
	for i = 1, 8 do if list[i]:is_empty() then to = i break end end
	list[from], list[to] = list[to], list[from]
	inv:set_list("main", list)
	return true, "moved to hotbar slot " .. to, {slot = to}
end

-- Furnaces: load ore and fuel into the furnace at pos from the player's
-- inventory (the node inventory's src and fuel lists, as the furnace GUI
-- would) and start its timer; take its output.
local function furnace_at(c)
	local pos = parse_pos(c.pos)
	if not pos then return nil, "needs pos {x,y,z}" end
	local n = minetest.get_node(pos).name
	if n ~= "default:furnace" and n ~= "default:furnace_active" then
		return nil, "no furnace at " .. minetest.pos_to_string(pos) .. " (" .. n .. ")"
	end
	return pos
end

local function move_to(pinv, ninv, list, item, count)
	if count <= 0 then return 0 end
	local stack = ItemStack(item .. " " .. count)
	if not pinv:contains_item("main", stack) then
		local have = inv_counts(pinv)[item] or 0
		return nil, string.format("%d %s wanted, %d in the inventory", count, item, have)
	end
	if not ninv:room_for_item(list, stack) then return nil, "the furnace's " .. list .. " is full" end
	local taken = pinv:remove_item("main", stack)
	ninv:add_item(list, taken)
	return taken:get_count()
end

commands.furnace_load = function(player, c)
	local pos, err = furnace_at(c)
	if not pos then return false, err end
	local ninv = minetest.get_meta(pos):get_inventory()
	local pinv = player:get_inventory()
	local n, fuel_n = tonumber(c.n) or 1, tonumber(c.fuel_n) or 1
	local cooked = minetest.get_craft_result({method = "cooking", width = 1, items = {ItemStack(c.item)}})
	if not cooked or cooked.item:is_empty() then return false, tostring(c.item) .. " does not smelt" end
	local burn = minetest.get_craft_result({method = "fuel", width = 1, items = {ItemStack(c.fuel)}})
	if not burn or burn.time <= 0 then return false, tostring(c.fuel) .. " is not a fuel" end
	local got, e1 = move_to(pinv, ninv, "src", c.item, n)
	if not got then return false, e1 end
	local gotf, e2 = move_to(pinv, ninv, "fuel", c.fuel, fuel_n)
	if not gotf then
		-- give the ore back: nothing half-loaded
		pinv:add_item("main", ninv:remove_item("src", ItemStack(c.item .. " " .. got)))
		return false, e2
	end
	minetest.get_node_timer(pos):start(1.0)
	return true, string.format("loaded %d %s and %d %s; makes %s in %.0f s each", got, c.item, gotf, c.fuel,
		cooked.item:get_name(), cooked.time), {output = cooked.item:get_name(), time = cooked.time}
end

commands.furnace_take = function(player, c)
	local pos, err = furnace_at(c)
	if not pos then return false, err end
	local ninv = minetest.get_meta(pos):get_inventory()
	local pinv = player:get_inventory()
	local took = {}
	for i, st in ipairs(ninv:get_list("dst")) do
		if not st:is_empty() then
			local left = pinv:add_item("main", st)
			took[st:get_name()] = (took[st:get_name()] or 0) + st:get_count() - left:get_count()
			ninv:set_stack("dst", i, left)
		end
	end
	if not next(took) then return false, "the furnace's output is empty" end
	return true, "took " .. describe(took), took
end

local function list_counts(inv, list)
	local t = {}
	for _, st in ipairs(inv:get_list(list) or {}) do
		if not st:is_empty() then t[st:get_name()] = (t[st:get_name()] or 0) + st:get_count() end
	end
	return t
end

-- furnace_state is the furnace at pos as the state line reports it.
local function furnace_state(pos)
	local n = minetest.get_node(pos).name
	if n ~= "default:furnace" and n ~= "default:furnace_active" then return nil end
	local inv = minetest.get_meta(pos):get_inventory()
	return {pos = p3(pos), active = n == "default:furnace_active", src = list_counts(inv, "src"),
		fuel = list_counts(inv, "fuel"), dst = list_counts(inv, "dst")}
end

-- A training dummy: a mob-like entity with 10 hp for attack (minetest_game
-- has no mobs). spawn_dummy puts one on the ground 2 blocks ahead.
minetest.register_entity("mfm_state:dummy", {
	initial_properties = {
		hp_max = 10, physical = true, collide_with_objects = true,
		collisionbox = {-0.4, 0, -0.4, 0.4, 1.6, 0.4}, selectionbox = {-0.4, 0, -0.4, 0.4, 1.6, 0.4},
		visual = "cube", visual_size = {x = 0.8, y = 1.6},
		textures = {"default_junglewood.png", "default_junglewood.png", "default_tree.png",
			"default_tree.png", "default_tree.png", "default_tree.png"},
	},
	on_activate = function(self)
		self.object:set_armor_groups({fleshy = 100})
		self.object:set_acceleration({x = 0, y = -9.81, z = 0})
	end,
	-- It takes the punch's damage and stays where it stands (no knockback).
	on_punch = function(self, puncher, tflp, caps, dir, damage)
		local hp = self.object:get_hp() - (damage or 0)
		if hp <= 0 then
			ev({type = "kill", item = "mfm_state:dummy"})
			self.object:remove()
		else
			self.object:set_hp(hp)
		end
		return true
	end,
	on_step = function(self)
		local v = self.object:get_velocity()
		if v and (v.x ~= 0 or v.z ~= 0) then self.object:set_velocity({x = 0, y = v.y, z = 0}) end
	end,
})

commands.spawn_dummy = function(player, c)
	local pos = player:get_pos()
	local dir = player:get_look_dir()
	local h = vector.normalize({x = dir.x, y = 0, z = dir.z})
	local p = vector.round({x = pos.x + 2 * h.x, y = pos.y + 2, z = pos.z + 2 * h.z})
	-- down to the first walkable block
	for _ = 1, 8 do
		local def = minetest.registered_nodes[nodename({x = p.x, y = p.y - 1, z = p.z})]
		if def and def.walkable then break end
		p.y = p.y - 1
	end
	p.y = p.y - 0.5
	local obj = minetest.add_entity(p, "mfm_state:dummy")
	if not obj then return false, "could not add the dummy" end
	return true, "a dummy stands at " .. minetest.pos_to_string(p), {pos = p}
end

minetest.register_globalstep(function(dtime)
	for _, player in ipairs(minetest.get_connected_players()) do poll_commands(player) end
	acc = acc + dtime
	if acc < period then return end
	acc = 0
	for _, player in ipairs(minetest.get_connected_players()) do
		if item_drops and player:get_hp() > 0 then pick_up(player) end
		seq = seq + 1
		local pos = player:get_pos()
		local inv = {}
		for _, st in ipairs(player:get_inventory():get_list("main")) do
			if not st:is_empty() then inv[st:get_name()] = (inv[st:get_name()] or 0) + st:get_count() end
		end
		local hotbar = {}
		for i, st in ipairs(player:get_inventory():get_list("main")) do
			if i > 8 then break end
			hotbar[i] = st:get_name()
		end
		local feet = vector.round(pos)
		if seq % 10 == 1 or tree_cache == nil then
			tree_cache = find_tree(feet)
		end
		local tree = tree_cache
		local bd = minetest.get_biome_data(pos)
		local head = math.floor(pos.y + 0.5) + 2
		local headroom = 0
		while headroom < 16 do
			local def = minetest.registered_nodes[nodename({x = feet.x, y = head + headroom, z = feet.z})]
			if def and def.walkable then break end
			headroom = headroom + 1
		end
		-- Entombed: the eye is inside a solid block (the view is that block's
		-- inside): the agent has to dig it out.
		local eyep = vector.round(vector.add(pos, {x = 0, y = player:get_properties().eye_height or 1.47, z = 0}))
		local eyenode = nodename(eyep)
		local edef = minetest.registered_nodes[eyenode]
		local entombed = false
		if edef and edef.walkable and solid_drawtypes[edef.drawtype or "normal"] then
			entombed = {node = eyenode, pos = p3(eyep)}
		end
		local items = {}
		for _, obj in ipairs(minetest.get_objects_inside_radius(pos, 8)) do
			local le = obj:get_luaentity()
			if le and le.name == "__builtin:item" then items[#items + 1] = {pos = p3(obj:get_pos()), item = le.itemstring} end
		end
		local pt = pointed(player)
		local furnace = false
		if pt then furnace = furnace_state(pt.under) or false end
		local line = minetest.write_json({
			seq = seq,
			us = minetest.get_us_time(),
			gametime = minetest.get_gametime(),
			timeofday = minetest.get_timeofday(),
			pos = p3(pos),
			vel = p3(player:get_velocity()),
			yaw = math.deg(player:get_look_horizontal()),
			pitch = math.deg(player:get_look_vertical()),
			hp = player:get_hp(),
			breath = player:get_breath(),
			wielded = player:get_wielded_item():get_name(),
			-- how the wielded item is used: "use" (left click runs its on_use:
			-- food, hoes, buckets) or "place" (right click)
			wielded_use = wielded_use(player:get_wielded_item():get_name()),
			reach = reach(player:get_wielded_item():get_name()),
			wield_index = player:get_wield_index(),
			hotbar = hotbar,
			inventory = inv,
			controls = player:get_player_control(),
			pointed = pt or false,
			pointed_object = pointed_object(player),
			furnace = furnace,
			below = nodename({x = feet.x, y = math.floor(pos.y + 0.5) - 1, z = feet.z}),
			tree = tree or false,
			biome = bd and minetest.get_biome_name(bd.biome) or "",
			headroom = headroom,
			entombed = entombed,
			ahead = ahead_of(feet, player:get_look_horizontal()),
			liquid = liquid_near(feet),
			under_floor = under_floor(feet),
			ready = ready,
			spawn = spawn_note,
			items = items,
			events = events,
		})
		events = {}
		out:write(line, "\n")
		out:flush()
	end
end)
minetest.register_on_shutdown(function() out:close() end)

-- The task-state graph of the game (setting mfm_export_graph): every
-- registered item with its type, groups, drops, tool reach and fuel time,
-- and every crafting and cooking recipe with counts, from the game's own
-- definitions (minetest.registered_items, minetest.get_all_craft_recipes),
-- written once to <world>/mfm_graph.json after all mods are loaded.
local function drops_of(def)
	local d = def.drop
	if d == nil then return nil end
	if type(d) == "string" then
		if d == "" then return {} end
		return {d}
	end
	local out = {}
	for _, entry in ipairs(d.items or {}) do
		for _, it in ipairs(entry.items or {}) do
			out[#out + 1] = it
		end
	end
	return out
end

local function export_graph()
	local items, recipes = {}, {}
	local names = {}
	for name in pairs(minetest.registered_items) do names[#names + 1] = name end
	table.sort(names)
	for _, name in ipairs(names) do
		local def = minetest.registered_items[name]
		if name ~= "" and name ~= "air" and name ~= "ignore" and name ~= "unknown" then
			local e = {type = def.type, stack_max = def.stack_max,
				description = minetest.get_translated_string("en", def.description or ""):gsub("\n.*", "")}
			local groups = {}
			for g, v in pairs(def.groups or {}) do groups[g] = v end
			if next(groups) then e.groups = groups end
			if def.type == "node" then
				e.drops = drops_of(def)
				e.walkable = def.walkable ~= false
			end
			local caps = def.tool_capabilities
			if caps and caps.groupcaps and next(caps.groupcaps) then
				local reach = {}
				for g, gc in pairs(caps.groupcaps) do reach[g] = gc.maxlevel or 0 end
				e.digs = reach
			end
			local f = minetest.get_craft_result({method = "fuel", width = 1, items = {ItemStack(name)}})
			if f and f.time and f.time > 0 then e.fuel_time = f.time end
			items[name] = e
			for _, r in ipairs(minetest.get_all_craft_recipes(name) or {}) do
				local out = ItemStack(r.output)
				local inputs, grid, last = {}, {}, 0
				for i = 1, 9 do
					if r.items[i] and r.items[i] ~= "" then last = i end
				end
				for i = 1, last do
					local it = r.items[i] or ""
					grid[i] = it
					if it ~= "" then inputs[it] = (inputs[it] or 0) + 1 end
				end
				local rec = {output = out:get_name(), count = out:get_count(), method = r.method,
					width = r.width, inputs = inputs, grid = grid}
				if r.method == "cooking" then
					local probe = grid[1] or ""
					if probe:sub(1, 6) == "group:" then probe = "" end
					if probe ~= "" then
						local cr = minetest.get_craft_result({method = "cooking", width = 1, items = {ItemStack(probe)}})
						if cr and cr.time then rec.time = cr.time end
					end
				end
				if out:get_name() == name then recipes[#recipes + 1] = rec end
			end
		end
	end
	local f = assert(io.open(minetest.get_worldpath() .. "/mfm_graph.json", "w"))
	f:write(minetest.write_json({game = minetest.get_game_info and minetest.get_game_info().id or "minetest_game",
		items = items, recipes = recipes}, true))
	f:close()
	minetest.log("action", string.format("[mfm_state] exported %d items and %d recipes", #names, #recipes))
end

if minetest.settings:get_bool("mfm_export_graph", false) then
	minetest.register_on_mods_loaded(function() minetest.after(0, export_graph) end)
end
